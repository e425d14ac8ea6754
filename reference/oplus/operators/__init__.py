"""The shipped O+ operators: sliding-sum (A), wordcount / paircount (A+,
Operator 14), longest-tweet-per-hashtag (A+, Operator 9), the ScaleJoin band join (J+,
Operator 10, §8.3) and the forwarding Operator 15; :mod:`.catalogue` builds them from a
:class:`spec.oplus.scenario.Scenario`."""
