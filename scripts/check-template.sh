#!/bin/sh
# Checks examples/lambda/template.yaml: cfn-lint (which also runs the SAM
# transform), then prints the resources the SAM transform makes (functions,
# URLs and their auth types, roles and their policies). Skips, with a
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
PY
