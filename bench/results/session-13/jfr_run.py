"""Profile one bench worker run with JFR: the recording dumped by jcmd before the session stops."""
import os, subprocess, sys
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
import run as benchrun
mode, cfgp, out, jfr = sys.argv[1:5]
import argparse
args = argparse.Namespace(mode=mode, config=cfgp, master="local[2]", driver_memory="default", out=out, event_log=None)
orig_stop = None
from pyspark.sql import SparkSession
orig_stop = SparkSession.stop
def stop(self):
    pid = self._jvm.java.lang.ProcessHandle.current().pid()
    subprocess.run(["jcmd", str(pid), "JFR.dump", f"filename={jfr}"], check=False)
    orig_stop(self)
SparkSession.stop = stop
sys.exit(benchrun.worker(args))
