"""Publishing: the dataset card, the Hub upload, the lm-eval export, and the local registration that makes the
Hugging Face calls work by bare name (``load_dataset("ancientbench", cfg)``, ``evaluate.load("ancientbench_metric")``)."""
