"""Tournaments at scale: spec -> plan of shards -> Ray tasks -> Parquet files + manifest."""

#: Retries per shard after a worker dies or an I/O error (`--retries`); here, not in
#: pipeline.run, so that building the command's parser imports no Ray.
DEFAULT_RETRIES = 3
