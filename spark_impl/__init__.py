"""The production executor on PySpark.

Independent of ``reference/`` by design (the differential suite compares the two); it may
share the plain data types and input formats of ``spec/``.
"""
