"""`python -m graphflow ...`: the `graphflow` command, also where its console script is not on PATH."""

from graphflow.cli import console

if __name__ == "__main__":
    console()
