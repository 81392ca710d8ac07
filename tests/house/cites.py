#!/usr/bin/env python3
# cites.py TOP: every file a comment of ours cites (a name ending in .c,
# .h, .sh, .py, .md, ...) is in the tree: as a path from the top or
# from the citing file's folder, or, when bare, a file of that name
# somewhere in it.  A name with a placeholder in capitals (layer-NAME.c,
# JOB.yaml), a system header that is installed, and the few names that
# are not files of ours (llm.c, a project; config.yaml, the user's) are
# not citations.  Run by tests/house/includes.sh; prints each one that
# is not, and exits 1.
import os
import re
import sys

os.chdir(sys.argv[1])
EXTS = r'(?:c|h|cc|cu|cuh|sh|py|md|inc|yaml|am|ac)'
TOKEN = re.compile(r'(?<![\w./$-])((?:[\w.-]+/)*[A-Za-z_][\w-]*(?:\.[\w-]+)*\.'
                   + EXTS + r')(?![\w/])')
# A path from the top of the tree, with or without an extension
# (tests/fuzz/run-fuzzers, backend/worker/): a file or a folder of ours.
ROOTED = re.compile(r'(?<![\w./$-])((?:lib|kernels|backend|tui|bench|cmd|tests|'
                    r'examples|clients|docs|themes)/[\w./-]*[\w/])')
NOT_OURS = {'llm.c', 'config.yaml', 'gloo-version.h', 'build-id.h', 'config.h'}
SYSTEM = ['/usr/include', '/usr/local/cuda/include']
ROOTS = ['lib', 'kernels', 'backend', 'tui', 'bench', 'cmd', 'tests',
         'examples', 'clients', 'docs', 'themes', 'm4']

files = [f for f in os.listdir('.') if os.path.isfile(f)]
for r in ROOTS:
    for d, _, fs in os.walk(r):
        files += [os.path.join(d, f) for f in fs]
paths = set(files)
names = {os.path.basename(f) for f in files}


def comment_lines(path):
    ext = path.rsplit('.', 1)[-1]
    try:
        text = open(path, encoding='utf-8', errors='replace').read()
    except OSError:
        return
    if ext in ('c', 'h', 'cc', 'cu', 'cuh'):
        for m in re.finditer(r'/\*.*?\*/|//[^\n]*', text, re.S):
            first = text.count('\n', 0, m.start()) + 1
            for i, line in enumerate(m.group(0).split('\n')):
                yield first + i, line
    elif ext in ('sh', 'py', 'inc', 'am', 'ac', 'yaml'):
        for i, line in enumerate(text.split('\n')):
            s = line.lstrip()
            if s.startswith('#') and not s.startswith(('#!', '#include')):
                yield i + 1, s


def cited_ok(src, name):
    if re.search(r'(^|[-_/])[A-Z]{2,}($|[-_.])', name) or name in NOT_OURS:
        return True             # a pattern, or not a file of ours
    if name in paths or os.path.normpath(os.path.join(os.path.dirname(src),
                                                     name)) in paths:
        return True
    if '/' not in name and name in names:
        return True
    return name.endswith('.h') and any(
        os.path.exists(os.path.join(d, name)) for d in SYSTEM)


def rooted_ok(name):
    # A program the build makes is cited by its source's name.
    return bool(re.search(r'[A-Z]{2,}|/[A-Z]$', name)) or \
        os.path.exists(name) or os.path.exists(name + '.c')


bad = 0
for f in sorted(files):
    if f.startswith(('tests/fuzz/corpus', 'tests/fuzz/crashes')):
        continue
    for line, text in comment_lines(f):
        cited = [m.group(1) for m in TOKEN.finditer(text)
                 if not cited_ok(f, m.group(1))]
        cited += [m.group(1).rstrip('.') for m in ROOTED.finditer(text)
                  if not rooted_ok(m.group(1).rstrip('.'))]
        for name in dict.fromkeys(cited):
            print("%s:%d: cites %s, which is not in the tree" % (f, line, name))
            bad = 1
sys.exit(bad)
