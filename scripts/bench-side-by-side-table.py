# Prints the table of a scripts/bench-side-by-side.sh run folder: per workload, concurrency
# and repetition, both servers' rate, p99 and server CPU per operation (srv% x 10,000 /
# ops/s, in microseconds), the CPU of everything else (oth%) and the ratio; then, per
# repetition, issue 17's goals (ratio at c=64 per workload, Lectern's p99 at c=16) and
# which of them that repetition missed.
import json,glob,sys,os,collections
d=sys.argv[1]
rows=collections.defaultdict(dict)
for f in sorted(glob.glob(d+'/*.json')):
    b=os.path.basename(f)[:-5]; who,wl,rep=b.split('-')
    j=json.load(open(f))
    for r in j.get('results',[]):
        rows[(wl,r['concurrency'],rep)][who]=r
ratio=lambda L,Z: L['per_sec']/Z['per_sec'] if Z['per_sec'] else 0
print("| workload | c | rep | Lectern ops/s | p99 ms | srv µs/op | zitadel ops/s | p99 ms | srv µs/op | oth% (L / z) | ratio |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for k in sorted(rows):
    wl,c,rep=k; L=rows[k].get('l'); Z=rows[k].get('z')
    if not L or not Z: continue
    us=lambda r: r['server_cpu_pct']*10000/r['per_sec'] if r['per_sec'] else 0
    print(f"| {wl} | {c} | {rep} | {L['per_sec']:,.0f} | {L['p99_ms']:.1f} | {us(L):.0f} | {Z['per_sec']:,.0f} | {Z['p99_ms']:.1f} | {us(Z):.0f} | {L['other_cpu_pct']:.0f} / {Z['other_cpu_pct']:.0f} | {ratio(L,Z):.2f} |")

# Issue 17's goals: the ratio at c=64 per workload, and Lectern's p99 at c=16.
ratio_goal={'W1':1.1,'W2':1.0,'W3':1.2,'W4':1.1,'W5':1.1}; p99_goal_ms=10.0
print()
for rep in sorted({k[2] for k in rows}):
    missed=[]; checked=0
    for (wl,c,r),v in sorted(rows.items()):
        L=v.get('l'); Z=v.get('z')
        if r!=rep or not L or not Z: continue
        if c==64 and wl in ratio_goal:
            checked+=1
            if ratio(L,Z)<ratio_goal[wl]: missed.append(f"{wl} ratio at c=64 {ratio(L,Z):.2f} < {ratio_goal[wl]}")
        if c==16:
            checked+=1
            if L['p99_ms']>p99_goal_ms: missed.append(f"{wl} p99 at c=16 {L['p99_ms']:.1f} ms > {p99_goal_ms:.0f}")
    if checked:
        print(f"rep {rep}: " + ("every goal checked is met" if not missed else "missed " + "; ".join(missed)) + f" ({checked} checks)")
