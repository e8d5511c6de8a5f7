"""The application: the command line, the written audit's command, generated docs."""
