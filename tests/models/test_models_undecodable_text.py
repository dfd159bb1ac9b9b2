"""Text holding bytes that were not UTF-8 never breaks a model request (real HTTP on 127.0.0.1).

Found by the second adversarial round (issue 20): a tool that returned such text (a file name
from `os.listdir`, a subprocess's output decoded with `surrogateescape`) or failed with it in its
error made the next model request fail with a raw `UnicodeEncodeError` naming no agent, model or
tool; the checkpoint had meanwhile stored the text with `?` in its place. The model now gets
U+FFFD where the bytes were, and the stored conversation is the one the model saw.
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.tools import tool

from graphflow import ReactAgent
from graphflow.models import openai_model
from tests.models.openai_server import OpenAIServer

NAME = "report-\udcff.txt"  # what os.listdir gives for the bytes b"report-\xff.txt"


@tool
def list_files(folder: str) -> str:
    """The files in a folder."""
    return f"found {NAME}"


@tool
def read_file(path: str) -> str:
    """Read a file."""
    raise FileNotFoundError(f"no such file: {NAME}")


def test_undecodable_tool_text_reaches_the_model_as_replacement_characters(
    make_server, tmp_path: Path
) -> None:
    server: OpenAIServer = make_server("openai_strict").start()
    for tools in ([list_files], [read_file]):
        agent = ReactAgent(
            name="files",
            model=openai_model("m", base_url=server.base_url, max_retries=0),
            tools=tools,
            output_key="out",
        )
        url = f"sqlite:///{tmp_path}/runs.db"
        thread = tools[0].name
        assert agent.invoke("List the files", thread_id=thread, checkpointer=url)["out"]
        sent = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
        assert "report-\ufffd.txt" in sent[-1]["content"]
        stored = agent.get_state(thread, checkpointer=url).values["messages"]
        (result,) = [m for m in stored if m.type == "tool"]
        assert result.content == sent[-1]["content"]  # read back as it was sent, not with '?'
