"""pytest --nbmake runs the notebooks offline: the Hugging Face offline variables are set before any kernel starts.

Notebook kernels inherit this process's environment, so nothing in a notebook can reach the Hub.
"""

import os

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"
# A fresh Hugging Face cache per test session: results never come from (or leak into) the user's cache.
if "ANCIENTBENCH_TEST_HF_HOME" not in os.environ:
    import tempfile

    os.environ["ANCIENTBENCH_TEST_HF_HOME"] = tempfile.mkdtemp(prefix="ancientbench-hf-")
os.environ["HF_HOME"] = os.environ["ANCIENTBENCH_TEST_HF_HOME"]
os.environ.pop("HF_DATASETS_CACHE", None)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")
