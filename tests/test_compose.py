"""docker-compose.yml, checked without Docker: services, image built from the repo, the shared data lake volume,
health checks, variables all declared in .env.example (no secret in the compose file), the Spark connection.
`docker-compose config` (the real parser) runs too when the binary is installed."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE_FILE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"
DOCKERFILE = ROOT / "docker" / "Dockerfile"
ENTRYPOINT = ROOT / "docker" / "entrypoint.sh"

AIRFLOW = ["airflow-api-server", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer"]
SPARK = ["spark-master", "spark-worker-1", "spark-worker-2"]
ONE_SHOTS = ["airflow-init"]
TOOLS = ["replay"]  # profile "cli": not started by `up`
BUILT = AIRFLOW + ONE_SHOTS + SPARK + TOOLS
LAKE_VOLUME, LAKE_PATH = "lake", "/data/lake"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE_FILE.read_text())


@pytest.fixture(scope="module")
def services(compose) -> dict:
    return compose["services"]


def env_example() -> dict[str, str]:
    out = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            k, sep, v = line.partition("=")
            assert sep, f".env.example: not KEY=VALUE: {line!r}"
            out[k.strip()] = v.strip()
    return out


def compose_variables(text: str) -> set[str]:
    text = text.replace("$$", "")  # $$ is a literal $ for the container's shell, not a compose variable
    braced = set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)", text))
    bare = set(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", text))
    return braced | bare


def volume_mounts(service: dict) -> dict[str, str]:
    """target path -> source, from the short syntax (source:target[:mode]) or the long one."""
    mounts = {}
    for v in service.get("volumes", []):
        if isinstance(v, str):
            parts = v.split(":")
            mounts[parts[1]] = parts[0]
        else:
            mounts[v["target"]] = v.get("source")
    return mounts


def as_dict(env) -> dict[str, str]:
    if isinstance(env, list):
        return dict(item.split("=", 1) for item in env)
    return dict(env or {})


def test_service_names(services):
    assert sorted(services) == sorted(["postgres", *BUILT])
    assert services["replay"].get("profiles") == ["cli"]


def test_images_built_from_the_repo(services):
    images = set()
    for name in BUILT:
        build = services[name].get("build")
        assert isinstance(build, dict), f"{name}: no build section"
        assert build["context"] == ".", name
        assert (ROOT / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE, name
        images.add(services[name].get("image"))
    assert len(images) == 1, f"one image for Airflow and Spark, got {images}"
    assert services["postgres"]["image"].startswith("postgres:")
    docker = DOCKERFILE.read_text()
    assert re.search(r"uv sync --frozen --no-dev\s*$", docker, re.M), "the image must install from uv.lock"
    assert "openjdk-17" in docker
    for path in re.findall(r"^COPY (?:--\S+ )*(\S+) ", docker, re.M):
        assert (ROOT / path).exists(), f"Dockerfile copies {path}, which is not in the repository"
    # The build context must not carry the venvs, local data or .env (BuildKit's per-Dockerfile ignore file).
    ignored = (ROOT / "docker" / "Dockerfile.dockerignore").read_text().split()
    for path in (".venv", ".venv-flink", ".git", "data", "out", ".env"):
        assert path in ignored, path


def test_entrypoint_handles_every_command(services):
    roles = set(re.findall(r"^\s*([a-z|\- ]+)\)\s*$", ENTRYPOINT.read_text(), re.M))
    handled = {r.strip() for group in roles for r in group.split("|")}
    for name in BUILT:
        cmd = services[name]["command"]
        assert isinstance(cmd, list) and cmd, name
        if name != "replay":
            assert cmd[0] in handled, f"{name}: entrypoint has no role {cmd[0]!r}"
    assert os.access(ENTRYPOINT, os.X_OK)
    subprocess.run(["bash", "-n", str(ENTRYPOINT)], check=True)


def test_data_lake_volume_same_path_everywhere(compose, services):
    assert LAKE_VOLUME in compose["volumes"]
    for name in AIRFLOW + ONE_SHOTS + SPARK + TOOLS:
        mounts = volume_mounts(services[name])
        assert mounts.get(LAKE_PATH) == LAKE_VOLUME, f"{name}: {LAKE_VOLUME} not mounted at {LAKE_PATH}"
        # No other path of the same volume: the driver and the executors must agree on file names.
        assert [t for t, s in mounts.items() if s == LAKE_VOLUME] == [LAKE_PATH], name
    for name in services:
        for target, source in volume_mounts(services[name]).items():
            if not source.startswith((".", "/")):
                assert source in compose["volumes"], f"{name}: volume {source} not declared"
            else:
                assert (ROOT / source).exists(), f"{name}: bind mount {source} is not in the repository"


def test_healthchecks(services):
    for name in services:
        hc = services[name].get("healthcheck")
        if name in ONE_SHOTS + TOOLS:
            continue
        assert hc and hc.get("test"), f"{name}: no healthcheck"
        assert hc["test"][0] in ("CMD", "CMD-SHELL"), name
    # Ordering: Airflow waits for a healthy DB and a finished init; workers and the drivers for the master.
    for name in AIRFLOW:
        dep = services[name]["depends_on"]
        assert dep["postgres"]["condition"] == "service_healthy", name
        assert dep["airflow-init"]["condition"] == "service_completed_successfully", name
    assert services["airflow-init"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["airflow-init"]["restart"] == "no"
    for name in ["spark-worker-1", "spark-worker-2", "airflow-scheduler"]:
        assert services[name]["depends_on"]["spark-master"]["condition"] == "service_healthy", name


def test_every_variable_is_in_env_example():
    used = compose_variables(COMPOSE_FILE.read_text())
    declared = env_example()
    assert used, "the compose file reads no variable at all?"
    assert sorted(used - set(declared)) == [], "variables missing from .env.example"
    assert sorted(set(declared) - used) == [], ".env.example declares variables the compose file never reads"


def test_no_secret_literals(services):
    # Anything that looks like a credential is a ${VAR} reference, never a literal value.
    secretish = re.compile(r"PASSWORD|SECRET|FERNET|TOKEN")
    for name, svc in services.items():
        for k, v in as_dict(svc.get("environment")).items():
            if secretish.search(k) and not k.endswith("_FILE"):  # a file's path is not a secret
                assert re.fullmatch(r"\$\{[A-Z_]+(:?[?-][^}]*)?\}", str(v)), f"{name}: {k} is a literal"
            if k == "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN":
                assert re.search(r":\$\{POSTGRES_PASSWORD[^}]*\}@", v), f"{name}: DB password must be a variable"


def test_spark_connection_points_at_the_master(services):
    master = services["spark-master"]
    master_port = as_dict(master["environment"])["SPARK_MASTER_PORT"]
    uris = {as_dict(services[n]["environment"]).get("AIRFLOW_CONN_REPLAY_SPARK") for n in AIRFLOW + ONE_SHOTS}
    assert len(uris) == 1 and None not in uris, uris
    uri = uris.pop()
    parts = urlsplit(uri)
    assert parts.scheme == "spark"
    assert parts.hostname == master["hostname"] == "spark-master" and "spark-master" in services
    assert str(parts.port) == master_port
    # The workers register with the same master.
    for name in ["spark-worker-1", "spark-worker-2"]:
        assert as_dict(services[name]["environment"])["SPARK_MASTER_URL"] == f"spark://spark-master:{master_port}"
    # And the Spark provider really turns the connection into that master URL (what spark-submit gets).
    code = ("import json; from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook;"
            "c = SparkSubmitHook(conn_id='replay_spark')._resolve_connection();"
            "print(json.dumps({'master': c['master'], 'deploy_mode': c['deploy_mode']}))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update({"AIRFLOW_CONN_REPLAY_SPARK": uri, "AIRFLOW_HOME": str(ROOT / "build" / "airflow-home-compose-test"),
                "AIRFLOW__CORE__LOAD_EXAMPLES": "false", "AIRFLOW__CORE__UNIT_TEST_MODE": "false"})
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    resolved = json.loads(res.stdout.strip().splitlines()[-1])
    assert resolved == {"master": f"spark://spark-master:{master_port}", "deploy_mode": "client"}


def compose_binary() -> list[str] | None:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
        if probe.returncode == 0:
            return ["docker", "compose"]
    return None


def _config(binary: list[str], env_file: Path) -> subprocess.CompletedProcess:
    # The variables come from the env file only, not from whatever the test's environment holds.
    env = {k: v for k, v in os.environ.items() if k not in env_example()}
    return subprocess.run([*binary, "--env-file", str(env_file), "-f", str(COMPOSE_FILE), "config"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


def test_docker_compose_config(tmp_path):
    binary = compose_binary()
    if binary is None:
        pytest.skip("neither docker-compose nor the docker compose plugin is installed: "
                    "only the structural checks above ran")
    res = _config(binary, ENV_EXAMPLE)
    assert res.returncode == 0, res.stderr
    rendered = yaml.safe_load(res.stdout)
    assert sorted(rendered["services"]) == sorted(["postgres", *BUILT])
    env = rendered["services"]["airflow-scheduler"]["environment"]
    assert env["AIRFLOW_CONN_REPLAY_SPARK"] == "spark://spark-master:7077?deploy-mode=client"
    assert "${" not in res.stdout.replace("$${", ""), "a variable was left unresolved"
    # A required secret missing from .env stops compose with the message, instead of starting without it.
    broken = tmp_path / "env"
    broken.write_text("\n".join(line for line in ENV_EXAMPLE.read_text().splitlines()
                                if not line.startswith("POSTGRES_PASSWORD=")) + "\n")
    res = _config(binary, broken)
    assert res.returncode != 0
    assert "POSTGRES_PASSWORD" in res.stderr


def test_stack_job_config_is_the_demo_on_the_lake():
    # The stack's demo job is jobs/configs/demo.yaml with absolute paths on the shared volume (a cluster's
    # executors do not run in the driver's working directory).
    from event_replay.semantics.config import load_config

    demo = yaml.safe_load((ROOT / "jobs" / "configs" / "demo.yaml").read_text())
    stack = yaml.safe_load((ROOT / "docker" / "jobs" / "demo.yaml").read_text())
    assert stack["source"]["path"] == f"{LAKE_PATH}/sample"
    assert stack["output"]["path"] == f"{LAKE_PATH}/out/demo"
    for raw in (demo, stack):
        raw["source"].pop("path"), raw["output"].pop("path")
    assert stack == demo
    cfg = load_config(ROOT / "docker" / "jobs" / "demo.yaml")
    assert cfg.source.path.startswith(LAKE_PATH + "/") and cfg.output.path.startswith(LAKE_PATH + "/")
    assert "COPY docker/jobs ./docker/jobs" in DOCKERFILE.read_text()  # where docs/cluster.md says it is
