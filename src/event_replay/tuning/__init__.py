"""What-if tuning: replay one history under a grid of watermark settings and compare late rows, watermark lag
and firing delay (`replay tune`, the `watermark_tuning` DAG). grid.py parses and validates the grid before Spark
starts; runner.py replays every variant over the source read once; figures.py defines and computes the figures;
calibrate.py ranks the variants by agreement with the live output (`--against-live`, through compare/)."""
from .grid import Grid, GridError, Variant, parse_grid  # noqa: F401
