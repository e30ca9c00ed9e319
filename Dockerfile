# Attention Lab in a container: `docker build -t attention-lab .` then
# `docker run --rm -p 8501:8501 attention-lab` (or `-e PORT=7860 -p 7860:7860` where the host asks
# for another port, e.g. Hugging Face Spaces). Linted in CI with `hadolint Dockerfile`.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PORT=8501

# An unprivileged user owns nothing but its home; the app files stay read-only to it.
RUN useradd --create-home --no-log-init --uid 10001 --user-group lab

WORKDIR /app

# Requirements first, so editing the app does not reinstall them.
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt

COPY . .

USER 10001

EXPOSE 8501

# No curl in the slim image: Python asks Streamlit's own health endpoint.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/_stcore/health' % os.environ.get('PORT', '8501'), timeout=4)"]

# sh expands $PORT; exec hands PID 1 to Streamlit so `docker stop` reaches it.
CMD ["sh", "-c", "exec streamlit run app.py --server.address=0.0.0.0 --server.headless=true --server.port=${PORT:-8501}"]
