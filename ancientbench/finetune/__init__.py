"""The paper's fine-tuned baseline, one module per step.

- ``ancientbench finetune-data`` (:mod:`.data_command`): :mod:`.kinds` (what pairs there are) -> :mod:`.builder` (pairs
  from the open sources) -> :mod:`.leakage` (test targets held out, and the check) -> :mod:`.dataset` (selection,
  files, summary) with :mod:`.card`.
- ``ancientbench finetune`` (:mod:`.command`): :mod:`.train` (encoding, full fine-tuning, evaluation beside the base): ``finetune(FinetuneConfig(model, data, output, ...))``.
"""

from .train import FinetuneConfig, finetune

__all__ = ["FinetuneConfig", "finetune"]
