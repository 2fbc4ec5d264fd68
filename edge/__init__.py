"""The request edge: what every answer and every request meets whichever process serves it, before any app's view.

Its modules hold no app's rules: the headers every answer carries
(headers.py). hooks/, catalog/ and config/ build on it; it imports none of them.
"""
