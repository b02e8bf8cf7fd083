"""The engine's Spark extension (jvm/src/io/eventreplay/spark/) called directly through the test session's py4j
gateway, one test file per Java class: public entry points as the engine calls them, package-private classes and
members (KeyWalk, Running, TickTimes, the searches) by Java reflection, on small hand-made inputs."""
from __future__ import annotations

import pytest
from py4j.protocol import Py4JJavaError
from pyspark.sql import DataFrame

from event_replay.extension import PACKAGE, extension_jars


class JavaError(Exception):
    """The exception a reflective call threw (unwrapped from InvocationTargetException): its class and message."""

    def __init__(self, java_class: str, message: str):
        super().__init__(f"{java_class}: {message}")
        self.java_class = java_class


class Java:
    """Reflection on the extension's classes: `new`, `call`, `field` reach package-private members too (what they
    throw is raised as `Java.Error`). Python ints reach a Java `long` parameter (py4j sends small ones as Integer;
    reflection widens them), not a `Long`."""

    Error = JavaError

    def __init__(self, spark):
        self.spark = spark
        self.jvm = spark._jvm
        self.gateway = spark.sparkContext._gateway

    def cls(self, name: str):
        """The java.lang.Class of the extension's class `name` (a nested one as `Outer$Inner`)."""
        return self.jvm.py4j.reflection.ReflectionUtil.classForName(f"{PACKAGE}.{name}")

    def new(self, name: str, *args):
        ctors = [c for c in self.cls(name).getDeclaredConstructors() if c.getParameterCount() == len(args)]
        assert len(ctors) == 1, f"{name}: {len(ctors)} constructors of {len(args)} parameters"
        ctors[0].setAccessible(True)
        return _unwrapped(lambda: ctors[0].newInstance(self._objects(args)))

    def call(self, target, method: str, *args):
        """Instance method `method` of the object `target`, or the static one of the class named `target`."""
        owner = self.cls(target) if isinstance(target, str) else target.getClass()
        m = self._method(owner, method, len(args))
        return _unwrapped(lambda: m.invoke(None if isinstance(target, str) else target, self._objects(args)))

    def field(self, obj, name: str):
        f = obj.getClass().getDeclaredField(name)
        f.setAccessible(True)
        return f.get(obj)

    def longs(self, values) -> object:
        """A Java long[]."""
        arr = self.gateway.new_array(self.jvm.long, len(values))
        for i, v in enumerate(values):
            arr[i] = v
        return arr

    def utf8(self, s: str):
        return self.jvm.org.apache.spark.unsafe.types.UTF8String.fromString(s)

    def struct(self, schema):
        """The JVM StructType of a pyspark schema."""
        return self.jvm.org.apache.spark.sql.types.DataType.fromJson(schema.json())

    def internal_rows(self, df: DataFrame) -> list:
        """The rows of `df` as the JVM's internal rows (what a pass reads), in order."""
        return list(df._jdf.queryExecution().executedPlan().executeCollect())

    def frame(self, jdf) -> DataFrame:
        return DataFrame(jdf, self.spark)

    def _method(self, owner, name: str, arity: int):
        while owner is not None:
            found = [m for m in owner.getDeclaredMethods() if m.getName() == name and m.getParameterCount() == arity]
            if found:
                assert len(found) == 1, f"{name}: overloaded with {arity} parameters"
                found[0].setAccessible(True)
                return found[0]
            owner = owner.getSuperclass()
        raise AttributeError(f"no method {name} of {arity} parameters")

    def _objects(self, args):
        arr = self.gateway.new_array(self.jvm.java.lang.Object, len(args))
        for i, a in enumerate(args):
            arr[i] = a
        return arr


def _unwrapped(invoke):
    try:
        return invoke()
    except Py4JJavaError as exc:
        cause = exc.java_exception
        while cause.getClass().getName() == "java.lang.reflect.InvocationTargetException" and cause.getCause():
            cause = cause.getCause()
        raise JavaError(cause.getClass().getName(), str(cause.getMessage())) from None


@pytest.fixture(scope="session")
def java(spark):
    assert extension_jars() is not None, "the extension's jar is built by make install (jvm/build.sh)"
    return Java(spark)
