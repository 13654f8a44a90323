"""Headless Chromium (Debian's package) for the page tests: the DOM after scripts ran, and
screenshots. A missing browser fails the test (``make test`` installs it)."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("headless Chromium is needed to check the page: `make test` installs it "
                    "(apt-get install chromium)")
    return exe


def _run(args: list[str], profile: Path, timeout: int = 120) -> str:
    cmd = [chromium(), *FLAGS, f"--user-data-dir={profile}", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def dump_dom(page: Path, query: str = "", profile: Path | None = None) -> str:
    """The page's DOM after its script ran, opened as ``file://PAGE?q=QUERY``."""
    url = page.resolve().as_uri() + (f"?q={query}" if query else "")
    return _run(["--dump-dom", url], profile or page.parent / "chromium-profile")


def screenshot(page: Path, png: Path, size: str = "1280,1800") -> Path:
    _run([f"--screenshot={png}", f"--window-size={size}", page.resolve().as_uri()],
         page.parent / "chromium-profile-shot")
    assert png.is_file() and png.stat().st_size > 1000, "no screenshot written"
    return png


class Element:
    def __init__(self, tag: str, attrs: dict, parent: Element | None):
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Element] = []
        self.text = ""

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def ancestors(self):
        p = self.parent
        while p is not None:
            yield p
            p = p.parent

    def all_text(self) -> str:
        return self.text + "".join(c.all_text() for c in self.children)

    def find(self, tag: str | None = None, cls: str | None = None, **attrs) -> list[Element]:
        out = []
        for c in self.children:
            if ((tag is None or c.tag == tag) and (cls is None or cls in c.classes)
                    and all(c.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())):
                out.append(c)
            out.extend(c.find(tag, cls, **attrs))
        return out


VOID = {"input", "br", "meta", "img", "hr", "link", "wbr", "source", "col", "area", "base"}


class _Parser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        e = Element(tag, {k: (v if v is not None else "") for k, v in attrs}, self.cur)
        self.cur.children.append(e)
        if tag not in VOID:
            self.cur = e

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Element(tag, dict(attrs), self.cur))

    def handle_endtag(self, tag):
        e = self.cur
        while e is not None and e.tag != tag:
            e = e.parent
        if e is not None and e.parent is not None:
            self.cur = e.parent

    def handle_data(self, data):
        self.cur.text += data


def parse(html: str) -> Element:
    p = _Parser()
    p.feed(html)
    return p.root


def layout_check(page: Path, profile: Path | None = None) -> tuple[int, list[str]]:
    """Open `page` with ``?check=1``: the page's own script measures every SVG text after
    layout and lists pairs of overlapping text boxes and boxes outside their SVG. Returns
    (number of texts measured, problems)."""
    url = page.resolve().as_uri() + "?check=1"
    dom = parse(_run(["--dump-dom", url], profile or page.parent / "chromium-profile-check"))
    found = dom.find("pre", id="layout-check")
    assert found, "the page wrote no layout check"
    text = found[0].all_text().strip()
    return int(found[0].attrs["data-texts"]), [t for t in text.split("\n") if t]
