# promtext.py: the Prometheus text exposition for the metrics tests
# (metrics-prom.sh, metrics-storm.sh, metrics-prometheus.sh): fetch a
# scrape, parse its samples, find the endpoint in hunter run's output.
import json, re, time, urllib.request

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

def fetch(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        assert r.status == 200, r.status
        ctype = r.headers.get("Content-Type", "")
        assert ctype.startswith("text/plain; version=0.0.4"), ctype
        return r.read().decode()

def parse(text):
    """[(name, {label: value}, float)] of the sample lines."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, "not a sample line: %r" % line
        labels = dict(LABEL.findall(m.group(2) or ""))
        out.append((m.group(1), labels, float(m.group(3))))
    return out

def pick(samples, name, **labels):
    """The values of name whose labels include these."""
    return [v for n, l, v in samples if n == name and
            all(l.get(k) == str(x) for k, x in labels.items())]

def url_of(path, deadline=30):
    """The endpoint hunter run announced in its JSON lines at path."""
    end = time.time() + deadline
    while time.time() < end:
        for line in open(path):
            if line.startswith("{"):
                o = json.loads(line)
                if o.get("t") == "event" and o.get("kind") == "metrics":
                    return re.search(r"http://\S+/metrics", o["reason"]).group(0)
        time.sleep(0.1)
    raise SystemExit("no metrics endpoint announced in %s" % path)
