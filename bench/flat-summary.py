#!/usr/bin/env python3
"""The flat table of bench/flat-before-after.sh: per endpoint the medians of each side's rounds and their ratios."""
import json,glob,statistics,sys
d=sys.argv[1]
res={}
for side in ('before','after'):
    for f in sorted(glob.glob(f'{d}/load-{side}-*.json')):
        j=json.load(open(f))
        for r in j['rows']:
            m=r['median']; e=res.setdefault(r['key'],{}).setdefault(side,{'rps':[],'p50':[],'p99':[],'cpu':[]})
            e['rps'].append(m['rps']); e['p50'].append(m['p50']); e['p99'].append(m['p99']); e['cpu'].append(m['cpuUsPerReq'])
med=statistics.median
print('| endpoint | before req/s (rounds) | after req/s (rounds) | req/s after ÷ before | before / after p99 ms | server CPU µs/req before → after | CPU after ÷ before |')
print('|---|---|---|---|---|---|---|')
for k,v in res.items():
    b,a=v.get('before'),v.get('after')
    if not b or not a: continue
    f=lambda xs: ', '.join(str(round(x)) for x in xs)
    print(f"| `{k}` | {med(b['rps']):.0f} ({f(b['rps'])}) | {med(a['rps']):.0f} ({f(a['rps'])}) | {med(a['rps'])/med(b['rps']):.2f} | {med(b['p99']):.2f} / {med(a['p99']):.2f} | {med(b['cpu']):.0f} → {med(a['cpu']):.0f} | {med(a['cpu'])/med(b['cpu']):.2f} |")
