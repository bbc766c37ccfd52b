"""The tracker's store. The job tables register on the shared ``Base`` here, so
every importer of ``tables`` (Alembic's env, the schema test) sees them too."""

from tracker_service.store import job_tables as job_tables
