"""The service's two keys, and everything derived from them.

* ``CARDROOM_SECRET_KEY`` (32 bytes, hex) never leaves the service. Under it:
  - the server seed of hand ``n`` at table ``t`` is
    ``HMAC-SHA256(key, "cardroom/server-seed/v1" 0x00 t 0x00 n)``, so no seed is
    ever stored: it is derived when needed, and its commitment can be published
    before the hand;
  - tokens are ``base64url(HMAC-SHA256(key, "cardroom/token/v1" 0x00 role 0x00 t
    0x00 player_id))``, so a replayed join returns the same token without any
    token being stored (only their SHA-256 sits in the table's events);
  - openings (the values behind commitments, the deck among them) are stored
    beside their events encrypted with AES-256-GCM under
    ``HMAC-SHA256(key, "cardroom/openings/v1")``, bound to their stream and version;
  - a hand handed from the API to its showdown's worker (``service.handover``) is
    sealed likewise under ``HMAC-SHA256(key, "cardroom/sealed/v1")``.
* ``CARDROOM_SIGNING_KEY`` (the 32-byte Ed25519 private key seed, hex) signs the
  receipts of ended hands; ``GET /v1/fairness`` publishes its public key.

The API publishes its pair's fingerprint (``Keys.fingerprint``: the public key and a MAC
under the secret key, never a secret) at ``KEYS_KEY`` with the events, as ``cardroom
serve`` starts and where none is on each connection it makes after (``published_on``: Redis
restarted empty); a ``cardroom worker`` whose own differs refuses to take jobs
(``keys_disagree``), since it could not read a hand's hidden cards, or would sign receipts
that the published key does not verify.

Where one is unset the process makes up an ephemeral pair once and warns:
receipts and tokens will not survive a restart (``cardroom keys`` prints a pair
to keep).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import secrets
import threading
from dataclasses import dataclass
from functools import cached_property

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from redis.exceptions import ResponseError

from domain.fairness import receipt_message, seed_commitment
from service import jsonio

log = logging.getLogger(__name__)

KEYS_KEY = "cardroom:keys"  # the API's Keys.fingerprint, with the events


class OpeningsUnreadable(ValueError):
    """Stored openings that this service's secret key cannot decrypt (a stored record that
    does not decode, to the store)."""


@dataclass(frozen=True)
class Keys:
    secret: bytes
    signing: Ed25519PrivateKey

    @classmethod
    def from_hex(cls, secret_key: str, signing_key: str) -> Keys:
        return cls(bytes.fromhex(secret_key),
                   Ed25519PrivateKey.from_private_bytes(bytes.fromhex(signing_key)))

    @cached_property
    def public_key(self) -> str:
        return self.signing.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()

    @cached_property
    def fingerprint(self) -> str:
        """Names this pair without revealing either key: ``<public key>:<MAC>``."""
        return f"{self.public_key}:{self._mac('cardroom/fingerprint/v1').hex()[:32]}"

    def server_seed(self, table_id: str, hand_no: int) -> str:
        return self._mac("cardroom/server-seed/v1", table_id, str(hand_no)).hex()

    def seed_commitment(self, table_id: str, hand_no: int) -> str:
        return seed_commitment(self.server_seed(table_id, hand_no))

    def table_id(self, idempotency_key: str) -> str:
        """The id of the table made by a creation sent with ``idempotency_key``."""
        return self._mac("cardroom/table-id/v1", idempotency_key).hex()[:16]

    def command_id(self, idempotency_key: str) -> str:
        """The ``command_id`` of the events a command sent with ``idempotency_key`` causes:
        events of one command share it, and it does not disclose the key (histories are
        handed around, and a key replayed gets its first answer, a table's tokens say)."""
        return self._mac("cardroom/command-id/v1", idempotency_key).hex()[:32]

    def token(self, role: str, table_id: str, player_id: str = "") -> str:
        mac = self._mac("cardroom/token/v1", role, table_id, player_id)
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()

    def sign(self, receipt: dict) -> str:
        return self.signing.sign(receipt_message(receipt)).hex()

    def encrypt(self, openings: dict, context: str) -> str:
        nonce = os.urandom(12)
        sealed = self._cipher.encrypt(nonce, jsonio.dumps(openings).encode(), context.encode())
        return base64.b64encode(nonce + sealed).decode()

    def decrypt(self, blob: str, context: str) -> dict:
        raw = base64.b64decode(blob)
        try:
            return jsonio.loads(self._cipher.decrypt(raw[:12], raw[12:], context.encode()))
        except InvalidTag:
            raise OpeningsUnreadable(f"the openings of {context} do not decrypt under this "
                                     "service's CARDROOM_SECRET_KEY") from None

    def seal(self, data: bytes, context: str) -> bytes:
        """``data`` encrypted and authenticated for this service's own processes, bound to
        ``context``: AES-256-GCM under ``HMAC-SHA256(key, "cardroom/sealed/v1")``."""
        nonce = os.urandom(12)
        return nonce + self._sealing.encrypt(nonce, data, context.encode())

    def unseal(self, blob: bytes, context: str) -> bytes | None:
        """What ``seal`` sealed with this key and ``context``; None for anything else."""
        try:
            return self._sealing.decrypt(blob[:12], blob[12:], context.encode())
        except (InvalidTag, ValueError):
            return None

    @cached_property  # made once: every stored event with openings is encrypted or read
    def _cipher(self) -> AESGCM:
        return AESGCM(self._mac("cardroom/openings/v1"))

    @cached_property
    def _sealing(self) -> AESGCM:
        return AESGCM(self._mac("cardroom/sealed/v1"))

    def _mac(self, *parts: str) -> bytes:
        return hmac.new(self.secret, "\0".join(parts).encode(), hashlib.sha256).digest()


def publish_keys(client, keys: Keys) -> str | None:
    """The API's: its fingerprint at ``KEYS_KEY``, for the workers to check theirs, where
    none is published; else what differs from the pair published (``keys_disagree``), or
    None. Never replaced: a server started with the wrong keys, for a moment, must not
    lock the right workers out of a running service."""
    if client.set(KEYS_KEY, keys.fingerprint, nx=True):
        return None
    return keys_disagree(client, keys)


def published_on(connection, keys: Keys) -> bool:
    """The API's, on each connection it makes: its fingerprint at ``KEYS_KEY`` where none is
    (Redis restarted empty, or was emptied, since ``publish_keys``), for the workers that
    start after. Whether Redis answered; a node of a cluster that does not hold the key
    answers with a redirection, and the connection to the node that does publishes."""
    connection.send_command("SET", KEYS_KEY, keys.fingerprint, "NX")
    try:
        connection.read_response()
    except ResponseError as refused:
        return str(refused).startswith("MOVED")
    return True


def keys_disagree(client, keys: Keys) -> str | None:
    """Which of ``keys`` differ from those the API published, said for an operator; None if
    none does, or nothing is published (the API has not started on this Redis since it was
    emptied)."""
    stored = client.get(KEYS_KEY)
    if stored is None or stored.decode() == keys.fingerprint:
        return None
    public_key, _, mac = stored.decode().partition(":")
    own_public_key, _, own_mac = keys.fingerprint.partition(":")
    wrong = [name for name, theirs, ours in (("CARDROOM_SECRET_KEY", mac, own_mac),
                                             ("CARDROOM_SIGNING_KEY", public_key, own_public_key))
             if theirs != ours]
    verb = "differs" if len(wrong) == 1 else "differ"
    public = (f" (its public key {public_key}, this one's {keys.public_key})"
              if public_key != own_public_key else "")
    return (f"{' and '.join(wrong) or 'the keys'} of this process {verb} from the pair the "
            f"API published in Redis{public}: it could not read the hands' hidden cards, or "
            "would sign receipts that do not verify; give every process the API's pair")


def new_key_pair() -> tuple[str, str]:
    """A fresh (secret key, signing key) pair in hex."""
    signing = Ed25519PrivateKey.generate().private_bytes_raw().hex()
    return secrets.token_hex(32), signing


def parse_key(name: str, value: str) -> str:
    """``value`` if it is 32 bytes of hex, else a ValueError naming the variable."""
    try:
        if len(bytes.fromhex(value)) == 32:
            return value.lower()
    except ValueError:
        pass
    raise ValueError(f"{name} must be 32 bytes as 64 hex digits (`cardroom keys` prints a pair)")


_ephemeral: Keys | None = None
_lock = threading.Lock()


def keys_for(secret_key: str | None, signing_key: str | None) -> Keys:
    """The configured keys, or this process's ephemeral pair (made once, with a warning)."""
    global _ephemeral
    if secret_key and signing_key:
        return Keys.from_hex(secret_key, signing_key)
    with _lock:
        if _ephemeral is None:
            log.warning("CARDROOM_SECRET_KEY or CARDROOM_SIGNING_KEY is unset: using keys made up "
                        "for this process; receipts and tokens will not survive a restart")
            _ephemeral = Keys.from_hex(*new_key_pair())
        return _ephemeral
