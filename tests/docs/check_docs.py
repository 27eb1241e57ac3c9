#!/usr/bin/env python3
"""Checks the documentation against the built binary.

Usage: check_docs.py REPO BUILD_DIR [--update]

- docs/reference.md is exactly what `ftplan reference` writes.
- Every command a document shows is run: in ```sh blocks each line that starts with
  `build/ftplan` (continued with a trailing backslash) must exit 0; a line ending in the comment
  `# error` must exit 2 (a clear error, not a crash); in ```console blocks each line that starts
  with `$ ` is a command and the lines below it, up to the next `$ ` or the block's end, are its
  output, compared exactly (trailing spaces aside). With --update, the outputs shown are
  rewritten from the binary instead (and docs/reference.md regenerated).
  `build/ftplan serve ...` runs until it says where it serves, then is stopped.
  `PYTHONPATH=build/python python3 ...` runs where the Python module was built.
- Every file a document names exists: relative Markdown links, and `paths` in backticks that
  start with one of the repository's top folders.

The commands run in a scratch folder that links the repository's folders and a `build/` of the
binaries, with HOME there too, so files they write land in it and nothing is fetched from the
network (HF_HUB_OFFLINE=1).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

DOCS = ["README.md", "docs/guide.md", "docs/method.md", "docs/architecture.md",
        "data/README.md", "bench/README.md"]
TOP_FOLDERS = ("data/", "examples/", "src/", "tests/", "bench/", "web/", "schemas/", "docs/",
               "scripts/", "cmake/", "fuzz/", "benchmarks/")

failures = []


def fail(doc, line, message):
    failures.append(f"{doc}:{line}: {message}")


def blocks(text):
    """(language, first line number, lines) of every fenced block."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if m:
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append((m.group(1), start + 1, lines[start:j]))
            i = j + 1
        else:
            i += 1
    return out


def joined(lines):
    """Lines with a trailing backslash joined to the next: (first line index, command)."""
    out = []
    i = 0
    while i < len(lines):
        first = i
        cmd = lines[i]
        while cmd.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd.rstrip()[:-1] + " " + lines[i].strip()
        out.append((first, cmd))
        i += 1
    return out


def scratch_folder(repo, build):
    work = tempfile.mkdtemp(prefix="ftplan-docs-")
    for name in os.listdir(repo):
        if name in ("build", ".git") or name.startswith("build-"):
            continue
        os.symlink(os.path.join(repo, name), os.path.join(work, name))
    os.mkdir(os.path.join(work, "build"))
    for name in ("ftplan", "ftplan-net", "python"):
        if os.path.exists(os.path.join(build, name)):
            os.symlink(os.path.join(build, name), os.path.join(work, "build", name))
    return work


def environment(work):
    env = dict(os.environ)
    env.update({"HOME": work, "HF_HUB_OFFLINE": "1", "HF_HOME": os.path.join(work, ".hf"),
                "XDG_CACHE_HOME": os.path.join(work, ".cache"), "COLUMNS": "100",
                "ASAN_OPTIONS": "detect_leaks=0"})
    env.pop("FTPLAN_DATA", None)
    env.pop("FTPLAN_CALIBRATION_DIR", None)
    return env


def run(cmd, work):
    p = subprocess.run(["bash", "-c", cmd], cwd=work, env=environment(work),
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def run_server(cmd, work):
    """Starts `serve` and waits for the line that names its address."""
    p = subprocess.Popen(["bash", "-c", "exec " + cmd], cwd=work, env=environment(work),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    seen = []
    try:
        for line in p.stdout:
            seen.append(line)
            if "serving on http://" in line:
                return True, ""
        return False, "".join(seen)
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=10)


def check_commands(doc, text, work, build, update):
    new_lines = text.split("\n")
    replacements = []  # (start, end, lines) in new_lines, applied from the end
    python_built = os.path.exists(os.path.join(build, "python"))
    for lang, first_line, lines in blocks(text):
        if lang == "sh":
            for index, cmd in joined(lines):
                line_no = first_line + index
                stripped = cmd.strip()
                if stripped.startswith("PYTHONPATH=build/python python3"):
                    if not python_built:
                        print(f"{doc}:{line_no}: the Python module is not built: not run")
                        continue
                elif not stripped.startswith("build/ftplan"):
                    continue
                want_error = re.search(r"#\s*error\b", stripped) is not None
                if re.match(r"build/ftplan(-net)? serve\b", stripped):
                    ok, seen = run_server(stripped.split(" #")[0], work)
                    if not ok:
                        fail(doc, line_no, f"`{stripped}` did not start serving: {seen[-500:]}")
                    continue
                code, out, err = run(stripped, work)
                if want_error and code != 2:
                    fail(doc, line_no, f"`{stripped}` exits with {code}, expected 2: {err[-300:]}")
                elif not want_error and code != 0:
                    fail(doc, line_no, f"`{stripped}` exits with {code}: {err[-500:]}")
        elif lang == "console":
            i = 0
            while i < len(lines):
                if not lines[i].startswith("$ "):
                    i += 1
                    continue
                start = i
                cmd = lines[i][2:]
                while cmd.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd.rstrip()[:-1] + " " + lines[i].strip()
                i += 1
                out_start = i
                while i < len(lines) and not lines[i].startswith("$ "):
                    i += 1
                shown = [l.rstrip() for l in lines[out_start:i]]
                while shown and shown[-1] == "":
                    shown.pop()
                code, out, err = run(cmd, work)
                got = [l.rstrip() for l in out.rstrip("\n").split("\n")] if out.strip() else []
                line_no = first_line + start
                if code != 0:
                    fail(doc, line_no, f"`{cmd}` exits with {code}: {err[-500:]}")
                    continue
                if got != shown:
                    if update:
                        a = first_line - 1 + out_start
                        b = first_line - 1 + out_start + len(shown)
                        replacements.append((a, b, got))
                    else:
                        diff = next((k for k in range(max(len(got), len(shown)))
                                     if k >= len(got) or k >= len(shown) or got[k] != shown[k]), 0)
                        fail(doc, line_no,
                             f"`{cmd}`: output differs from the document at its line {diff + 1}: "
                             f"document {shown[diff] if diff < len(shown) else '(end)'!r}, "
                             f"binary {got[diff] if diff < len(got) else '(end)'!r} "
                             f"(check_docs.py --update rewrites it)")
    for a, b, got in sorted(replacements, reverse=True):
        new_lines[a:b] = got
    return "\n".join(new_lines)


def check_files(doc, text, repo):
    folder = os.path.dirname(os.path.join(repo, doc))
    in_code = False
    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"^(https?:|mailto:|#)", target):
                continue
            path = target.split("#")[0]
            if path and not os.path.exists(os.path.join(folder, path)):
                fail(doc, n, f"the link {target} names no file")
        if in_code:
            continue
        for path in re.findall(r"`([^`\s]+)`", line):
            if not path.startswith(TOP_FOLDERS) or re.search(r"[*<>{}$]|\.\.\.", path):
                continue
            path = path.rstrip(".,:;")
            if not os.path.exists(os.path.join(repo, path)):
                fail(doc, n, f"`{path}` names no file of the repository")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    update = "--update" in sys.argv
    if len(args) != 2:
        print(__doc__)
        return 2
    repo, build = (os.path.abspath(a) for a in args)
    binary = os.path.join(build, "ftplan")
    reference = subprocess.run([binary, "reference"], capture_output=True, text=True,
                               env=environment(build))
    if reference.returncode != 0:
        fail("docs/reference.md", 1, f"ftplan reference exits with {reference.returncode}")
    else:
        path = os.path.join(repo, "docs/reference.md")
        current = open(path).read() if os.path.exists(path) else ""
        if current != reference.stdout:
            if update:
                open(path, "w").write(reference.stdout)
            else:
                fail("docs/reference.md", 1, "is not what `ftplan reference` writes "
                     "(regenerate: build/ftplan reference > docs/reference.md)")
    work = scratch_folder(repo, build)
    try:
        for doc in DOCS:
            path = os.path.join(repo, doc)
            if not os.path.exists(path):
                fail(doc, 0, "missing")
                continue
            text = open(path).read()
            new_text = check_commands(doc, text, work, build, update)
            if update and new_text != text:
                open(path, "w").write(new_text)
            check_files(doc, new_text, repo)
    finally:
        shutil.rmtree(work)
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print(f"docs: {len(DOCS)} documents; every command ran and every file named exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
