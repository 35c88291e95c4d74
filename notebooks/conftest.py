"""pytest --nbmake runs the notebooks offline: the Hugging Face offline variables are set before any kernel starts.

Notebook kernels inherit this process's environment, so nothing in a notebook can reach the Hub.
"""

import os

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")
