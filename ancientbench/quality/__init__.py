"""Data quality: the knowledge-free shortcut strategies (:mod:`.strategies`) and ``ancientbench audit`` (:mod:`.audit`)."""
