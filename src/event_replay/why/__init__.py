"""The why-report: why the replay fired and dropped what it did (watermark timelines, who held the stream
watermark, late rows by cause, the what-if tuning and the comparison with the live job), as an HTML page rendered
from its summary.json.

- report.py: `why_report(output_path, cfg)`, the figures (Spark) and the files;
- timelines.py, plot.py: the watermark timelines and timelines.png;
- page.py: the page (the report's index.html and the Airflow plugin's page);
- versus_live.py: the "versus live" entry (replay compare's result and what calibration found).
Spark is imported by the modules that need it, not by this package: the plugin imports page.py in the webserver.
"""
