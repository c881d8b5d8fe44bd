#!/bin/sh
# Checks examples/lambda/template.yaml: cfn-lint (which also runs the SAM
# transform), then prints the resources the SAM transform makes (functions,
# URLs and their auth types, roles and their policies) and checks that
# every node may invoke every other one, unqualified and through any version
# or alias (GEECACHE_QUALIFIER), and takes its peers' writes (a secret, or
# GEECACHE_UNSIGNED_WRITES=true behind IAM). Skips, with a
# message, if cfn-lint or python3's samtranslator is missing; install both
# with `pip install cfn-lint` (it brings aws-sam-translator), then run
# scripts/check-template.sh.
set -eu
cd "$(dirname "$0")/.."
template=examples/lambda/template.yaml
if ! command -v cfn-lint >/dev/null 2>&1; then
  echo "SKIPPED: cfn-lint is not installed (pip install cfn-lint), $template not checked"
  exit 0
fi
cfn-lint "$template"
echo "cfn-lint: $template is clean"
if ! python3 -c 'import samtranslator' >/dev/null 2>&1; then
  echo "SKIPPED: python3 cannot import samtranslator; no transform summary"
  exit 0
fi
AWS_DEFAULT_REGION=${AWS_DEFAULT_REGION:-us-east-1} python3 - "$template" <<'PY'
import json, sys
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

class NoManagedPolicies:
    def load(self):
        return {}

with open(sys.argv[1]) as f:
    tpl = yaml_parse(f.read())
# What `sam package` does: the code is uploaded, CodeUri becomes an S3 URI.
tpl["Globals"]["Function"]["CodeUri"] = "s3://example-bucket/bootstrap.zip"
out = transform(tpl, {}, NoManagedPolicies())
res = out["Resources"]
print("SAM transform:", len(res), "resources")
for name, r in sorted(res.items()):
    p = r.get("Properties", {})
    line = f"  {name}: {r['Type']}"
    if r["Type"] == "AWS::Lambda::Function":
        line += f" FunctionName={json.dumps(p.get('FunctionName'))} Role={json.dumps(p.get('Role'))}"
    elif r["Type"] == "AWS::Lambda::Url":
        line += f" Target={json.dumps(p.get('TargetFunctionArn'))} AuthType={p.get('AuthType')} InvokeMode={json.dumps(p.get('InvokeMode'))}"
    elif r["Type"] == "AWS::Lambda::Permission":
        line += f" Action={p.get('Action')} Principal={p.get('Principal')} FunctionUrlAuthType={p.get('FunctionUrlAuthType')}"
    elif r["Type"] == "AWS::IAM::Role":
        line += f" Managed={json.dumps(p.get('ManagedPolicyArns'))}"
        for pol in p.get("Policies", []):
            for st in pol["PolicyDocument"]["Statement"]:
                line += f"\n      {st['Effect']} {st['Action']} on {json.dumps(st['Resource'])}"
    print(line)

# Every node must reach every other one, unqualified or through the version
# or alias GEECACHE_QUALIFIER names (function:NAME and function:NAME:*), and
# take its peers' writes: a secret, or unsigned writes behind IAM.
def sub(v):
    return v["Fn::Sub"] if isinstance(v, dict) and "Fn::Sub" in v else v
arn = "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:"
funcs = {n: r for n, r in res.items() if r["Type"] == "AWS::Lambda::Function"}
bad = []
for name, f in sorted(funcs.items()):
    p = f["Properties"]
    env = p.get("Environment", {}).get("Variables", {})
    if "GEECACHE_SECRET" not in env and str(env.get("GEECACHE_UNSIGNED_WRITES", "")).lower() != "true":
        bad.append(f"{name}: no GEECACHE_SECRET and no GEECACHE_UNSIGNED_WRITES=true: peers' writes would be refused")
    role = res[p["Role"]["Fn::GetAtt"][0]]
    granted = set()
    for pol in role["Properties"].get("Policies", []):
        for st in pol["PolicyDocument"]["Statement"]:
            acts = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            if st["Effect"] == "Allow" and "lambda:InvokeFunction" in acts:
                rs = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
                granted |= {sub(r) for r in rs}
    for other, g in sorted(funcs.items()):
        if other == name:
            continue
        fn = sub(g["Properties"]["FunctionName"])
        for want in (arn + fn, arn + fn + ":*"):
            if want not in granted:
                bad.append(f"{name}: lambda:InvokeFunction not granted on {want}")
for b in bad:
    print("FAIL:", b)
if bad:
    sys.exit(1)
print("roles: every node may invoke every other, qualified or not; writes are taken")
PY
