"""Rebuild the .docx fixtures in this folder from the Markdown sources in src/ (this project's own text).

Each source becomes:
- pandoc_<name>.docx   pandoc straight to Word (pandoc's own numbering and table XML)
- lo_<name>.docx       pandoc to ODT, then LibreOffice: soffice --headless --convert-to docx:"MS Word 2007 XML"
- lohtml_<name>.docx   pandoc to HTML, then LibreOffice's HTML import, then LibreOffice's Word export
- lort_<name>.docx     the pandoc .docx opened and saved again by LibreOffice (a Word file re-saved in Writer)

Needs pandoc and soffice (Debian: apt-get install pandoc libreoffice-writer-nogui). The outputs are
committed, so tests run without these tools; tests/test_dilemmas_docx_fixtures.py regenerates them into a
temporary folder and checks them when the tools are present.

    python tests/data/docx/make_fixtures.py [OUT_DIR]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"


def _soffice(src: Path, out_dir: Path, profile: Path, *, infilter: str | None = None) -> Path:
    cmd = ["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--norestore"]
    if infilter:
        cmd.append(f"--infilter={infilter}")
    cmd += ["--convert-to", 'docx:MS Word 2007 XML', "--outdir", str(out_dir), str(src)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=240, env={**os.environ, "HOME": str(profile)})
    produced = out_dir / (src.stem + ".docx")
    if not produced.exists():
        raise RuntimeError(f"soffice made no {produced}")
    return produced


def build(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        profile = tmp / "profile"
        profile.mkdir()
        for md in sorted(SRC.glob("*.md")):
            name = md.stem
            target = out / f"pandoc_{name}.docx"
            subprocess.run(["pandoc", str(md), "-o", str(target)], check=True, timeout=120)
            made.append(target)
            odt = tmp / f"{name}.odt"
            subprocess.run(["pandoc", str(md), "-o", str(odt)], check=True, timeout=120)
            produced = _soffice(odt, tmp, profile)
            target = out / f"lo_{name}.docx"
            shutil.move(produced, target)
            made.append(target)
            html = tmp / f"h_{name}.html"
            subprocess.run(["pandoc", str(md), "-s", "--metadata", f"title={name}", "-o", str(html)],
                           check=True, timeout=120)
            produced = _soffice(html, tmp, profile, infilter="HTML (StarWriter)")
            target = out / f"lohtml_{name}.docx"
            shutil.move(produced, target)
            made.append(target)
            rt_in = tmp / "rt_in"
            rt_out = tmp / "rt_out"
            rt_in.mkdir(exist_ok=True)
            rt_out.mkdir(exist_ok=True)
            source = rt_in / f"{name}.docx"
            shutil.copy(out / f"pandoc_{name}.docx", source)
            produced = _soffice(source, rt_out, profile)
            target = out / f"lort_{name}.docx"
            shutil.move(produced, target)
            made.append(target)
    return made


if __name__ == "__main__":
    for p in build(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(p)
