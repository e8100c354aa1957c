#!/usr/bin/env python3
"""Where a load's time went, from two scrapes of Lectern's metrics listener.

    curl -s 127.0.0.1:<metrics port>/metrics > before
    ... run the load (flowbench) ...
    curl -s 127.0.0.1:<metrics port>/metrics > after
    scripts/metrics-waits.py before after

For every histogram the load moved (the HTTP routes, the Redis commands, the
batched database writes) it prints the calls between the scrapes, their mean
and the bucket bounds below which half and 99% of them fell (issue 17).
"""
import re
import sys

SERIES = re.compile(r'^(lectern_[a-z_]+?)_(bucket|sum|count)(?:\{(.*)\})? (\S+)$')


def load(path):
    out = {}
    with open(path) as f:
        for line in f:
            m = SERIES.match(line.strip())
            if not m:
                continue
            name, part, labels, value = m.groups()
            labels = labels or ''
            le = None
            if part == 'bucket':
                le = re.search(r'le="([^"]+)"', labels).group(1)
                labels = re.sub(r',?le="[^"]+"', '', labels)
            h = out.setdefault((name, labels), {'buckets': {}})
            if le is not None:
                h['buckets'][float(le)] = float(value)
            else:
                h[part] = float(value)
    return out


def quantile(buckets, q):
    total = buckets[float('inf')]
    for le in sorted(buckets):
        if buckets[le] >= q * total:
            return le
    return float('inf')


def ms(s):
    return '> last bound' if s == float('inf') else f'≤ {s * 1000:g} ms'


def main():
    a, b = load(sys.argv[1]), load(sys.argv[2])
    for key in sorted(b):
        h, h0 = b[key], a.get(key, {'buckets': {}})
        if 'count' not in h or not h['buckets']:
            continue
        n = h['count'] - h0.get('count', 0)
        if n < 1:
            continue
        d = {le: v - h0['buckets'].get(le, 0) for le, v in h['buckets'].items()}
        mean = (h['sum'] - h0.get('sum', 0)) / n
        print(f'{key[0]}{{{key[1]}}}: {n:.0f} calls, mean {mean * 1000:.3f} ms, p50 {ms(quantile(d, 0.5))}, p99 {ms(quantile(d, 0.99))}')


if __name__ == '__main__':
    main()
