"""Reports over results files: reading them (``results``), the one table formatter (``table``), the paper-style
report with tables and plots (``report``, ``plots``), paired comparison (``compare``) and calibration
(``calibration``)."""
