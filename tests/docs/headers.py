"""headers.py SOURCE: the public headers document every function, and
docs/c-api.md covers every header.

A function declaration (NZ_EXTERN ...;) must be preceded by a comment: the
line above it, or above the run of declarations it belongs to (accessors
documented together), ends a comment. Each include/nwbzarr/*.h must be named
in docs/c-api.md, and every function docs/c-api.md names (nz_xxx() or
`nz_xxx`) must exist in the headers, so the page cannot cite a removed one."""
import glob
import os
import re
import sys


def main():
    src = sys.argv[1]
    errors = []
    functions = set()
    for path in sorted(glob.glob(os.path.join(src, "include", "nwbzarr", "*.h"))):
        lines = open(path).read().split("\n")
        name = os.path.relpath(path, src)
        i = 0
        while i < len(lines):
            if not lines[i].startswith("NZ_EXTERN"):
                i += 1
                continue
            decl_start = i
            while not lines[i].rstrip().endswith(";"):
                i += 1
            decl = " ".join(lines[decl_start:i + 1])
            m = re.search(r"\b(nz_\w+)\s*\(", decl)
            if not m:
                errors.append("%s:%d: cannot parse '%s'" % (name, decl_start + 1, decl))
                i += 1
                continue
            functions.add(m.group(1))
            # Walk up over the declarations (and their continuation lines) of this run.
            j = decl_start - 1
            while j >= 0 and lines[j].strip() and not lines[j].rstrip().endswith("*/") and \
                    (lines[j].startswith("NZ_EXTERN") or lines[j].startswith("\t")):
                j -= 1
            if j < 0 or not lines[j].rstrip().endswith("*/"):
                errors.append("%s:%d: %s has no comment stating its contract"
                              % (name, decl_start + 1, m.group(1)))
            i += 1
    if len(functions) < 50:
        errors.append("found only %d public functions: the parser is broken" % len(functions))

    doc = open(os.path.join(src, "docs", "c-api.md")).read()
    headers = "".join(open(p).read() for p in glob.glob(os.path.join(src, "include", "nwbzarr", "*.h")))
    for path in glob.glob(os.path.join(src, "include", "nwbzarr", "*.h")):
        h = "nwbzarr/" + os.path.basename(path)
        if h not in doc:
            errors.append("docs/c-api.md does not mention %s" % h)
    # Names the page cites (calls, or `nz_...` in code spans): functions,
    # types and fields must exist in the headers.
    cited = set(re.findall(r"\b(nz_[a-z0-9_]+)\s*\(", doc)) | set(re.findall(r"`(nz_[a-z0-9_]+)", doc))
    for name in sorted(cited):
        if not re.search(r"\b%s\b" % name, headers):
            errors.append("docs/c-api.md names %s, which no public header declares" % name)
    for e in errors:
        print("FAIL:", e)
    if errors:
        sys.exit(1)
    print("ok: %d public functions, each with a contract comment" % len(functions))


if __name__ == "__main__":
    main()
