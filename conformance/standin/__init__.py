"""A pure-Python stand-in for the parts of PySpark that ``spark_impl`` calls, so a suite can run
``spark_impl``'s driver code in-process without a JVM.

Not here: checks or oracles (they live with their family) and anything that starts Spark.
"""
