import json,os,filecmp,sys
d=sys.argv[1] if len(sys.argv)>1 else 'bench/out'; m=json.load(open(d+'/manifest.json'))
dropped=0
for c in m['cases']:
    for v in list(c['modules']):
        base=v.split('-')[0]
        if v==base: continue
        f=f"{d}/{c['name']}_{v}.py"; b=f"{d}/{c['name']}_{base}.py"
        if filecmp.cmp(f,b,shallow=False):
            os.remove(f); c['modules'].pop(v); c['predicted_us'].pop(v,None)
            if isinstance(c.get('plans'),dict): c['plans'].pop(v,None)
            dropped+=1
json.dump(m,open(d+'/manifest.json','w'),indent=1)
print('dropped',dropped); print({c['name']:list(c['modules']) for c in m['cases']})
