"""`python -m graphflow.cli ...`: the `graphflow` command."""

from graphflow.cli._app import console

if __name__ == "__main__":
    console()
