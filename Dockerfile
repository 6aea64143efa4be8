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
# The dependencies first, at the releases the tests ran on: a change to the code alone
# builds from the next step.
COPY pyproject.toml constraints.txt ./
RUN python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))\
['project']['dependencies'], sep='\n')" > /tmp/dependencies.txt \
    && pip install -r /tmp/dependencies.txt -c constraints.txt && rm /tmp/dependencies.txt
COPY . .
# Editable, so files beside the packages (openapi.yaml) are found as in a checkout.
RUN pip install --no-deps -e . && useradd --system --no-create-home cardroom

USER cardroom
EXPOSE 8000
CMD ["cardroom", "serve", "--host", "0.0.0.0"]
