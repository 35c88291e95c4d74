"""Publishing: the dataset card (``card``), the Hub upload (``hub``), the lm-evaluation-harness export
(``lm_eval_export``), and the local registration that makes the Hugging Face calls work by bare name
(``register``: ``load_dataset("ancientbench", cfg)``, ``evaluate.load("ancientbench_metric")``)."""
