"""hunter_build: the build backend of hunter-client (PEP 517 and 660),
standard library only.

`pip install ./clients/python` builds the wheel with it: the package's
files go straight from the source tree into the wheel, which is written
where pip asks (a temporary directory), so nothing is written into the
tree (no build/, no egg-info) and nothing has to be fetched to build it,
online or not.  `pip install -e` gets a wheel holding a .pth file that
points at the tree.  The name, version and other fields come from
pyproject.toml's [project] table.
"""

import base64
import hashlib
import os
import re
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "hunter_client"


def _project():
    """The [project] table of pyproject.toml: its strings, and its
    optional-dependencies as {extra: [requirement, ...]}."""
    fields, extras, table = {}, {}, None
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            m = re.match(r"^\[([^]]+)\]$", line)
            if m:
                table = m.group(1)
                continue
            m = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*(.+)$', line)
            if m is None:
                continue
            key, value = m.group(1), m.group(2)
            if table == "project" and value.startswith('"'):
                fields[key] = value.strip('"')
            elif table == "project.optional-dependencies":
                extras[key] = re.findall(r'"([^"]+)"', value)
    return fields, extras


def _names():
    fields, _ = _project()
    name = re.sub(r"[-_.]+", "_", fields["name"])
    return name, fields["version"]


def _metadata():
    fields, extras = _project()
    lines = ["Metadata-Version: 2.1", "Name: " + fields["name"],
             "Version: " + fields["version"]]
    if "description" in fields:
        lines.append("Summary: " + fields["description"])
    if "requires-python" in fields:
        lines.append("Requires-Python: " + fields["requires-python"])
    for extra, reqs in sorted(extras.items()):
        lines.append("Provides-Extra: " + extra)
        lines += ['Requires-Dist: %s; extra == "%s"' % (r, extra)
                  for r in reqs]
    readme = fields.get("readme")
    body = ""
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(HERE, readme), encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "%s,sha256=%s,%d" % (path, digest.rstrip(b"=").decode(),
                                len(data))


def _wheel(directory, files):
    """A wheel of files ({path in the wheel: bytes}) plus its dist-info;
    its file name."""
    name, version = _names()
    info = "%s-%s.dist-info" % (name, version)
    files = dict(files)
    files[info + "/METADATA"] = _metadata().encode()
    files[info + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: hunter_build\n"
                              "Root-Is-Purelib: true\nTag: py3-none-any\n"
                              ).encode()
    record = [_record_line(p, d) for p, d in sorted(files.items())]
    record.append(info + "/RECORD,,")
    files[info + "/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = "%s-%s-py3-none-any.whl" % (name, version)
    with zipfile.ZipFile(os.path.join(directory, wheel), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            z.writestr(path, data)
    return wheel


def _sources():
    files = {}
    for f in sorted(os.listdir(os.path.join(HERE, PACKAGE))):
        if f.endswith(".py"):
            with open(os.path.join(HERE, PACKAGE, f), "rb") as fh:
                files[PACKAGE + "/" + f] = fh.read()
    return files


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    return _wheel(wheel_directory, _sources())


def build_editable(wheel_directory, config_settings=None,
                   metadata_directory=None):
    return _wheel(wheel_directory, {PACKAGE + ".pth": (HERE + "\n").encode()})


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    import io
    import tarfile
    name, version = _names()
    base = "%s-%s" % (name, version)
    files = dict(_sources())
    for f in ("pyproject.toml", "README.md", "hunter_build.py"):
        with open(os.path.join(HERE, f), "rb") as fh:
            files[f] = fh.read()
    files["PKG-INFO"] = _metadata().encode()
    sdist = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, sdist), "w:gz",
                      format=tarfile.PAX_FORMAT) as t:
        for path, data in sorted(files.items()):
            ti = tarfile.TarInfo(base + "/" + path)
            ti.size = len(data)
            ti.mode = 0o644
            t.addfile(ti, io.BytesIO(data))
    return sdist
