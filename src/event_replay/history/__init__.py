"""Partition history: partitions and the replay clock's range (partitions.py), spans of partitions and which one
each output row belongs to (span.py), the state a partition carries to the next (state.py: the model, as plain data
around the engine's Carry; state_files.py: its files) and a range run's progress (progress.py). Above the engine and
io: the engine takes and returns the carried state as plain data and knows no folders; io knows only files."""
