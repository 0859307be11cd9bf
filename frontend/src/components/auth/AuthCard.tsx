import type { ReactNode } from "react";

interface Props {
  title: string;
  subtitle?: ReactNode;
  children: ReactNode;
}

/** The centred card of the pages shown before signing in (setup, login). */
export function AuthCard({ title, subtitle, children }: Props) {
  return (
    <div className="auth-screen">
      <main className="auth-card">
        <div className="brand auth-brand">
          <img src="/favicon.svg" alt="" width={26} height={26} />
          <span>Pronghorn</span>
        </div>
        <h1 className="auth-title">{title}</h1>
        {subtitle && <p className="auth-subtitle">{subtitle}</p>}
        {children}
      </main>
    </div>
  );
}
