"""Reports over results files: reading them (``results``), the paper-style report with tables and plots
(``report``, ``plots``), paired comparison (``compare``), calibration (``calibration``), the knowledge-free
reference rows (``reference``) and the README's main job (``ladder``). Tables go through :mod:`ancientbench.table`."""
