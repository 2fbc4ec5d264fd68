"""The hash of OAuth client secrets: salted SHA-256, one round, instead of the password hasher's many.

A password hasher is slow on purpose, because people choose guessable
passwords. A client secret is 128 random characters (django-oauth-toolkit's
generator, about 760 bits): no number of guesses finds it, so slowness buys
nothing, while every token request of a confidential client pays for it (a
refresh took a third of a CPU second with PBKDF2 at Django 5.2's iterations).
Listed in PASSWORD_HASHERS after the default, so people's passwords keep
PBKDF2; OAUTH2_PROVIDER["CLIENT_SECRET_HASHER"] names it.
"""

import hashlib

from django.contrib.auth.hashers import BasePasswordHasher, mask_hash
from django.utils.crypto import constant_time_compare
from django.utils.translation import gettext_noop as _


class ClientSecretHasher(BasePasswordHasher):
    algorithm = "client_secret_sha256"

    def encode(self, password, salt):
        self._check_encode_args(password, salt)
        digest = hashlib.sha256((salt + password).encode()).hexdigest()
        return f"{self.algorithm}${salt}${digest}"

    def decode(self, encoded):
        algorithm, salt, digest = encoded.split("$", 2)
        assert algorithm == self.algorithm
        return {"algorithm": algorithm, "hash": digest, "salt": salt}

    def verify(self, password, encoded):
        decoded = self.decode(encoded)
        return constant_time_compare(encoded, self.encode(password, decoded["salt"]))

    def safe_summary(self, encoded):
        decoded = self.decode(encoded)
        return {
            _("algorithm"): decoded["algorithm"],
            _("salt"): mask_hash(decoded["salt"]),
            _("hash"): mask_hash(decoded["hash"]),
        }

    def harden_runtime(self, password, encoded):
        pass
