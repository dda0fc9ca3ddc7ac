"""The optional local LLM classifier: cache first, then Ollama under a hard timeout and a breaker.

It never decides alone and never holds a frame up for longer than its timeout: a failure,
timeout or open breaker leaves the rules' verdict in place and says so in the notes.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from proxy.detector.breaker import CircuitBreaker
from proxy.detector.config import ClassifierConfig
from proxy.detector.ollama import OllamaError, answer_text, parse_label, post_json, request_body

if TYPE_CHECKING:
    from proxy.store.classifier_cache import ClassifierAnswers
    from proxy.store.database import Database

PROMPT_VERSION = "1"  # bump when the prompt changes, so cached answers are not reused


@dataclass(frozen=True)
class ClassifierAnswer:
    label: str  # injection | benign
    score: float  # confidence that the text is an injection (0 for benign)
    model: str
    cached: bool


class ClassifierCache:
    """SHA-256 of (model, prompt version, text) -> answer, in the classifier_cache table."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._db: Database | None = None
        self._lock = threading.Lock()

    @staticmethod
    def key(model: str, text: str) -> str:
        digest = hashlib.sha256()
        for part in (model, PROMPT_VERSION, text):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
        return digest.hexdigest()

    def _answers(self) -> ClassifierAnswers:
        if self._db is None:
            from proxy.store.database import Database

            self._db = Database.open(self.db_path)
        return self._db.classifier_cache

    def get(self, key: str) -> tuple[str, float] | None:
        with self._lock:
            return self._answers().get(key)

    def put(self, key: str, model: str, label: str, score: float) -> None:
        with self._lock:
            self._answers().put(key, model, label, score)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class Classifier:
    def __init__(self, config: ClassifierConfig, cache: ClassifierCache | None) -> None:
        self.config = config
        self.cache = cache
        self.breaker = CircuitBreaker(config.breaker_threshold, config.breaker_cooldown_s)

    async def classify(self, text: str, notes: list[str]) -> ClassifierAnswer | None:
        """The model's answer for `text`, or None (with a note saying why) when there is none."""
        if len(text) > self.config.max_chars:
            text = text[: self.config.max_chars]
            notes.append("classifier:truncated")
        key = ClassifierCache.key(self.config.model, text)
        if self.cache is not None:
            try:
                hit = await asyncio.to_thread(self.cache.get, key)
            except sqlite3.Error:
                hit = None
                notes.append("classifier:cache_error")
            if hit is not None:
                return ClassifierAnswer(hit[0], hit[1], self.config.model, cached=True)
        if not self.breaker.allow():
            notes.append("classifier:breaker_open")
            return None
        path, body = request_body(self.config.api, self.config.model, text)
        try:
            reply = await asyncio.wait_for(
                post_json(self.config.url, path, body), self.config.timeout_ms / 1000
            )
            label, confidence = parse_label(answer_text(self.config.api, reply))
        except TimeoutError:
            self.breaker.record_failure()
            notes.append("classifier:timeout")
            return None
        except OllamaError:
            self.breaker.record_failure()
            notes.append("classifier:error")
            return None
        self.breaker.record_success()
        score = confidence if label == "injection" else 0.0
        if self.cache is not None:
            try:
                await asyncio.to_thread(self.cache.put, key, self.config.model, label, score)
            except sqlite3.Error:
                notes.append("classifier:cache_error")
        return ClassifierAnswer(label, score, self.config.model, cached=False)
