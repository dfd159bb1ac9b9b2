"""The python blocks of the README and docs/*.md, and which of them continue the block above.

A block runs as copied into a new script, alone. A block that needs the names of the block before
it says so on its first line, where a reader sees it: `# continues the block above`. Such a block
runs after the blocks it continues (back to the nearest block without the mark).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTINUES = "# continues the block above"
"""The first line of a python block that needs the names of the block before it."""
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """One python block of a page: `doc` is the page's path from the repository root."""

    doc: str
    number: int
    code: str

    @property
    def label(self) -> str:
        return f"{self.doc} (python block {self.number})"

    @property
    def continues(self) -> bool:
        return self.code.lstrip().startswith(CONTINUES)


def page_blocks(doc: str) -> list[Block]:
    """The python blocks of one page, in order."""
    text = (ROOT / doc).read_text()
    return [Block(doc, n, code) for n, code in enumerate(_BLOCK.findall(text), 1)]


def chain(blocks: list[Block], block: Block) -> list[Block]:
    """`block` with the blocks it continues, first to last (just `block` if it is not marked)."""
    index = blocks.index(block)
    start = index
    while start > 0 and blocks[start].continues:
        start -= 1
    return blocks[start : index + 1]
