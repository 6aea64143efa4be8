# One image for both roles:
#   docker run IMAGE                    -> cardroom serve --host 0.0.0.0 (port 8000)
#   docker run IMAGE cardroom worker    -> an RQ worker (needs REDIS_URL)
# Without REDIS_URL, serve runs embedded (in-process fakeredis, nothing kept).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY . .
# Editable, so files beside the packages (openapi.yaml) are found as in a checkout.
RUN pip install -e . && useradd --system --no-create-home cardroom

USER cardroom
EXPOSE 8000
CMD ["cardroom", "serve", "--host", "0.0.0.0"]
