"""The seed's data-extraction case: FunctionAgents around one ReactAgent, writing to SQLite.

python -m examples.data_extraction.generate_logs logs/
python -m examples.data_extraction logs/ orders.db      # twice: the second adds no rows
"""

from .pipeline import build, pipeline
from .steps import INSERT_SQL, LogTemplate

__all__ = ("INSERT_SQL", "LogTemplate", "build", "pipeline")
