# Prints the table of a scripts/bench-side-by-side.sh run folder: per workload, concurrency
# and repetition, both servers' rate, p99 and server CPU per operation (srv% x 10,000 /
# ops/s, in microseconds), the CPU of everything else (oth%) and the ratio.
import json,glob,sys,os,collections
d=sys.argv[1]
rows=collections.defaultdict(dict)
for f in sorted(glob.glob(d+'/*.json')):
    b=os.path.basename(f)[:-5]; who,wl,rep=b.split('-')
    j=json.load(open(f))
    for r in j.get('results',[]):
        rows[(wl,r['concurrency'],rep)][who]=r
print("| workload | c | rep | Lectern ops/s | p99 ms | srv µs/op | zitadel ops/s | p99 ms | srv µs/op | oth% (L / z) | ratio |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for k in sorted(rows):
    wl,c,rep=k; L=rows[k].get('l'); Z=rows[k].get('z')
    if not L or not Z: continue
    us=lambda r: r['server_cpu_pct']*10000/r['per_sec'] if r['per_sec'] else 0
    print(f"| {wl} | {c} | {rep} | {L['per_sec']:,.0f} | {L['p99_ms']:.1f} | {us(L):.0f} | {Z['per_sec']:,.0f} | {Z['p99_ms']:.1f} | {us(Z):.0f} | {L['other_cpu_pct']:.0f} / {Z['other_cpu_pct']:.0f} | {L['per_sec']/Z['per_sec']:.2f} |")
