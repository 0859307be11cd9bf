import { AuthGate } from "./components/auth/AuthGate";
import { Workspace } from "./components/Workspace";
import { useRoute } from "./hooks/useRoute";

/** The route, the auth gate (setup / login / session), and the app for the signed-in user. */
export function App() {
  const [route, go] = useRoute();
  return (
    <AuthGate route={route} go={go}>
      {(session, actions) => (
        <Workspace key={session.user?.id ?? "local"} session={session} actions={actions} route={route} go={go} />
      )}
    </AuthGate>
  );
}
