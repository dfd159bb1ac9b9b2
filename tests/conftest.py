"""Shared fixtures for the foundation tests."""

import pytest
from langchain_core.tools import tool


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


@pytest.fixture
def search_tool():
    return search
