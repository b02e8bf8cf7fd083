"""The IO layer: reading the source (with quarantine and the replay range) and writing the outputs atomically."""
from .output import WriteSummary, ms_to_timestamp, swap_in, write_outputs
from .partition_source import partition_config, read_partition_source
from .source import SourceData, prepare_source, read_raw, read_source

__all__ = ["SourceData", "WriteSummary", "ms_to_timestamp", "prepare_source", "read_raw",
           "read_source", "read_partition_source", "partition_config", "swap_in", "write_outputs"]
