#!/usr/bin/env python3
"""Prints the functions of C and C++ files whose bodies exceed a line count.

Usage: function_sizes.py MAX_LINES FILE...

A function's size is counted as clang-tidy's readability-function-size
counts it: the line of its body's closing brace minus the line of its
opening brace. universal-ctags finds the functions (name, first line, last
line) without compiling anything, so a file costs milliseconds where a
clang-tidy parse costs seconds; the body's opening brace is found by
matching braces back from the last line, over the text with its comments,
string and character literals blanked (a brace inside them is not code).
Prints "FILE:LINE: function 'NAME', N lines" for each one over MAX_LINES and
exits 0; exits 2 when ctags fails.
"""
import re
import shutil
import subprocess
import sys

# A raw string's opening: R"delim( (the delimiter is at most 16 characters).
RAW = re.compile(r'R"([^()\\ ]{0,16})\(')


def blanked(text):
    """TEXT with comments and literals replaced by spaces, newlines kept."""
    out = list(text)
    i, n = 0, len(text)

    def blank(start, end):
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif c == "R" and RAW.match(text, i) and not (
                i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            delim = RAW.match(text, i).group(1)
            end = text.find(")" + delim + '"', i)
            end = n if end < 0 else end + len(delim) + 2
            blank(i, end)
            i = end
        elif c in "\"'":
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and \
                    i + 1 < n and text[i + 1].isalnum():
                i += 1
                continue
            k = i + 1
            while k < n and text[k] != c and text[k] != "\n":
                k += 2 if text[k] == "\\" else 1
            blank(i, min(k + 1, n))
            i = k + 1
        else:
            i += 1
    return "".join(out)


def opening_line(code, line_starts, last_line):
    """The line of the brace matching the last '}' on LAST_LINE, or None."""
    if last_line > len(line_starts):
        return None
    # The end of LAST_LINE (1-based): its newline, or the end of the text.
    end = line_starts[last_line] - 1 if last_line < len(line_starts) \
        else len(code)
    pos = code.rfind("}", line_starts[last_line - 1], end + 1)
    if pos < 0:
        return None
    depth = 0
    for k in range(pos, -1, -1):
        if code[k] == "}":
            depth += 1
        elif code[k] == "{":
            depth -= 1
            if depth == 0:
                return code.count("\n", 0, k) + 1
    return None


def functions(paths):
    """(path, name, first line, last line) of each function ctags finds."""
    # Debian's universal-ctags installs ctags-universal (and ctags as an
    # alternative another ctags may own).
    ctags = shutil.which("ctags-universal") or shutil.which("ctags")
    if ctags is None:
        sys.stderr.write("function_sizes.py: no ctags-universal or ctags "
                         "(deploy/deps.sh test installs universal-ctags)\n")
        sys.exit(2)
    out = subprocess.run(
        [ctags, "--language-force=C++", "--kinds-C++=f", "--fields=+ne",
         "-o", "-", *paths],
        capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(2)
    for entry in out.stdout.splitlines():
        fields = entry.split("\t")
        extra = dict(f.split(":", 1) for f in fields[3:] if ":" in f)
        # A lambda (ctags names it __anon...) is part of the function it is
        # written in, as clang-tidy counts it.
        if fields[0].startswith("__anon"):
            continue
        if "line" in extra and "end" in extra:
            yield fields[1], fields[0], int(extra["line"]), int(extra["end"])


def main(argv):
    limit, paths = int(argv[1]), argv[2:]
    if not paths:
        return 0
    code, starts = {}, {}
    for path, name, first, last in sorted(functions(paths)):
        if path not in code:
            with open(path, encoding="utf-8", errors="replace") as f:
                code[path] = blanked(f.read())
            starts[path] = [0] + [m.end() for m in
                                  re.finditer("\n", code[path])]
        opening = opening_line(code[path], starts[path], last)
        if opening is None or opening < first:
            opening = first
        lines = last - opening
        if lines > limit:
            print(f"{path}:{first}: function '{name}', {lines} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
