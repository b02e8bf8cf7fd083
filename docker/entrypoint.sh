#!/usr/bin/env bash
# Entry point of the stack's image: the first argument picks the role.
#   spark-master | spark-worker        Spark standalone daemons (foreground, from the venv's pyspark)
#   airflow-init                       one-shot: metadata DB migration + the admin user's password file
#   api-server | scheduler | dag-processor | triggerer   Airflow 3 components
#   driver | executor                  Spark on Kubernetes pods (spark.kubernetes.container.image = this image)
#   anything else                      run as is (e.g. `replay run ...`, `spark-submit ...`, `bash`)
set -euo pipefail

spark_class="${SPARK_HOME}/bin/spark-class"

case "${1:-bash}" in
  spark-master)
    shift
    # The master advertises the name the other containers resolve (the compose service name).
    exec "${spark_class}" org.apache.spark.deploy.master.Master \
      --host "${SPARK_MASTER_HOST:-$(hostname)}" --port "${SPARK_MASTER_PORT:-7077}" \
      --webui-port "${SPARK_MASTER_WEBUI_PORT:-8080}" "$@"
    ;;
  spark-worker)
    shift
    # Cores and memory come from SPARK_WORKER_CORES / SPARK_WORKER_MEMORY (read by the Worker itself).
    exec "${spark_class}" org.apache.spark.deploy.worker.Worker \
      --host "$(hostname)" --webui-port "${SPARK_WORKER_WEBUI_PORT:-8081}" \
      --work-dir "${SPARK_WORKER_DIR:-/opt/spark/work}" "$@" "${SPARK_MASTER_URL:-spark://spark-master:7077}"
    ;;
  airflow-init)
    shift
    : "${AIRFLOW_ADMIN_USER:?set AIRFLOW_ADMIN_USER in .env}"
    : "${AIRFLOW_ADMIN_PASSWORD:?set AIRFLOW_ADMIN_PASSWORD in .env}"
    airflow db migrate
    # Airflow 3's simple auth manager reads user passwords from this JSON file (users and roles come from
    # AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS); written from .env, so no password is in the compose file.
    passwords="${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE:?}"
    mkdir -p "$(dirname "${passwords}")"
    python - "${passwords}" <<'PY'
import json, os, sys
with open(sys.argv[1], "w") as f:
    json.dump({os.environ["AIRFLOW_ADMIN_USER"]: os.environ["AIRFLOW_ADMIN_PASSWORD"]}, f)
PY
    chmod 600 "${passwords}"
    echo "airflow-init: metadata DB migrated, user '${AIRFLOW_ADMIN_USER}' (admin) configured"
    ;;
  api-server | scheduler | dag-processor | triggerer)
    exec airflow "$@"
    ;;
  driver)
    # Spark on Kubernetes starts the driver pod with `driver <spark-submit args>` (cluster deploy mode).
    shift
    exec spark-submit --conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS}" --deploy-mode client "$@"
    ;;
  executor)
    # ... and executor pods with `executor` and their settings in SPARK_* variables.
    shift
    mapfile -t java_opts < <(env | grep '^SPARK_JAVA_OPT_' | sort -t_ -k4 -n | sed 's/^[^=]*=//')
    exec java "${java_opts[@]}" -Xms"${SPARK_EXECUTOR_MEMORY}" -Xmx"${SPARK_EXECUTOR_MEMORY}" \
      -cp "${SPARK_CONF_DIR:-${SPARK_HOME}/conf}:${SPARK_HOME}/jars/*${SPARK_EXTRA_CLASSPATH:+:${SPARK_EXTRA_CLASSPATH}}" \
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "${SPARK_DRIVER_URL}" --executor-id "${SPARK_EXECUTOR_ID}" --cores "${SPARK_EXECUTOR_CORES}" \
      --app-id "${SPARK_APPLICATION_ID}" --hostname "${SPARK_EXECUTOR_POD_IP}" \
      --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID}" --podName "${SPARK_EXECUTOR_POD_NAME}"
    ;;
  *)
    exec "$@"
    ;;
esac
