"""Getting a model in: what a name refers to, whether it fits, the timed load, the migration."""
