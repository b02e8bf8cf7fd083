"""Security basics (issue 7): no secret in a DAG, job config, plugin, orchestration module or the compose stack;
credentials come from Airflow connections/variables or the environment (.env, never committed).

The plugin's pages refusing anonymous requests is tested against the real Airflow app in tests/test_plugin.py
(integration suite: it needs the Airflow metadata DB)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ["dags", "plugins", "jobs", "docker", "docker-compose.yml", "src/event_replay/orchestration",
           "expectations"]
SUFFIXES = {".py", ".yaml", ".yml", ".json", ".sh", ".cfg", ".ini", ".toml", ".env", ""}

_NAME = r"(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)"
# A secret-looking name bound to a literal: `password = "hunter2"`, `api_key: abcd1234`, `"token": "x..."`.
# A value taken from somewhere else (${ENV}, {{ var.value.x }}, os.environ[...], a Variable/Connection
# lookup, a function call) is fine, and so is an empty value.
_ASSIGN = re.compile(
    rf"""(?ix) (?<![\w${{]) (?P<name>[\w.-]*{_NAME}[\w-]*) ["']? \s* (?:=|:) \s*
        (?: (?P<q>["'])(?P<quoted>[^"'\n]*)(?P=q) | (?P<bare>[^\s,)\]}}#"']+) )""")
_PATTERNS = {
    "AWS access key id": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "credentials in a URL": re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@${}]+:(?![$]|\{)[^/\s@${}]+@"),
    "GitHub/Slack token": re.compile(r"\b(?:ghp_[A-Za-z0-9]{30,}|xox[baprs]-[A-Za-z0-9-]{10,})\b"),
}
# Values that reference a secret instead of holding one.
_INDIRECT = re.compile(r"^(?:\$|\{\{|\{|<|os\.|env|getenv|Variable|Connection|BaseHook|conn|var\.|None$|null$|"
                       r"true$|false$|\*+$|[A-Z_]+$)")


def findings(text: str) -> list[str]:
    out = []
    for m in _ASSIGN.finditer(text):
        value = m.group("quoted") if m.group("q") else m.group("bare")
        if value is None or value.strip() == "" or _INDIRECT.match(value.strip()):
            continue
        if re.search(r"(?i)(file|path|dir|_env|_var|_conn_id|_name)$", m.group("name")) or value.startswith("/"):
            continue  # where a secret is kept (a file, a variable's name), not the secret
        if m.group("bare") is not None and re.match(r"^[A-Za-z_][\w.]*(\(|\[)?", value) and not m.group("q") \
                and ("(" in value or "[" in value or "." in value):
            continue  # code: a call, subscript or attribute, not a literal
        if m.group("bare") is not None and not m.group("q") and re.match(r"^[a-z_][a-z0-9_]*$", value) \
                and not re.search(r"\d", value):
            continue  # a bare identifier (a variable or parameter name), not a literal
        out.append(f"{m.group('name')} = {value[:4]}...")
    for what, pat in _PATTERNS.items():
        out += [what for _ in pat.finditer(text)]
    return out


def files():
    for entry in SCANNED:
        p = ROOT / entry
        if p.is_file():
            yield p
        elif p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and f.suffix in SUFFIXES and "__pycache__" not in f.parts and ".md" != f.suffix:
                    yield f


def test_the_detector_finds_planted_secrets_and_ignores_references():
    planted = [
        'password = "hunter2"', "api_key: 9f8e7d6c5b4a", '"token": "abc.def.ghi"', "AWS AKIAIOSFODNN7EXAMPLE",
        "postgresql://airflow:airflow@db:5432/x", "-----BEGIN RSA PRIVATE KEY-----", "SECRET_KEY=s3cr3t",
    ]
    for text in planted:
        assert findings(text), text
    references = [
        "password: ${POSTGRES_PASSWORD:?set it in .env}", "token = request.cookies.get('_token')",
        'secret = Variable.get("replay_secret")', "conn = BaseHook.get_connection('spark')",
        "postgresql+psycopg2://${POSTGRES_USER}:${POSTGRES_PASSWORD}@postgres:5432/db",
        "AIRFLOW__API__SECRET_KEY: ${AIRFLOW_API_SECRET_KEY:?}", 'password = os.environ["AIRFLOW_ADMIN_PASSWORD"]',
        "def check(token): ...", "token: str", 'password=""',
    ]
    for text in references:
        assert findings(text) == [], text


def test_no_secret_literals_in_dags_configs_plugins_or_the_stack():
    scanned = list(files())
    assert len(scanned) > 10  # the scan sees the project's files
    bad = {str(f.relative_to(ROOT)): found for f in scanned
           if (found := findings(f.read_text(errors="replace")))}
    assert bad == {}, f"secret-looking literals (use an Airflow connection/variable or the environment): {bad}"


@pytest.mark.parametrize("path", [".env", ".airflow/simple_auth_manager_passwords.json.generated"])
def test_local_secret_files_are_not_tracked(path):
    import subprocess

    res = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--error-unmatch", path], capture_output=True)
    assert res.returncode != 0, f"{path} is tracked by git"
